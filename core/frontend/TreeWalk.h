#pragma once
// A pre-order walk over a tree-sitter tree with a cursor: its own stack does not grow with the
// tree, which is as deep as the user's nesting. Used by the parse's depth check (CudaParser.cpp)
// and the outline (CudaSourceIndex.cpp).

#include <tree_sitter/api.h>

namespace stitch::frontend {

/// Calls visit(node, depth) for every node under and including root, in pre-order; depth is 0 at
/// root. visit returns Descend to walk the node's children, Skip to pass over them, Stop to end
/// the walk.
enum class Walk { Descend, Skip, Stop };

template <typename Visit> void walkPreorder(TSNode root, Visit &&visit)
{
    TSTreeCursor cursor = ts_tree_cursor_new(root);
    for (;;) {
        const Walk step = visit(ts_tree_cursor_current_node(&cursor), ts_tree_cursor_current_depth(&cursor));
        if (step == Walk::Stop)
            break;
        if (step == Walk::Descend && ts_tree_cursor_goto_first_child(&cursor))
            continue;
        bool next = false;
        while (!(next = ts_tree_cursor_goto_next_sibling(&cursor)) && ts_tree_cursor_goto_parent(&cursor)) {
        }
        if (!next)
            break;
    }
    ts_tree_cursor_delete(&cursor);
}

} // namespace stitch::frontend
