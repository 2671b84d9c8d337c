#pragma once
// Tokens of the tensor-expression language (docs/TE.md).
//   .te text -> tokenize -> Token stream -> te::Parser (TeParser.h) -> ir::Graph
// The lexer never fails: a character it does not know becomes an Invalid token that the parser
// reports with its location, so every error message comes from one place.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace stitch::frontend::te {

enum class TokenKind {
    Identifier,
    Integer,        ///< decimal digits only
    Float,          ///< digits with a '.' or an exponent
    EndOfStatement, ///< a newline that ends a statement, or ';'
    EndOfFile,
    LParen, RParen, LBracket, RBracket,
    Comma, Colon, Assign, Question,
    Plus, Minus, Star, Slash, SlashSlash, Percent,
    Less, LessEqual, Greater, GreaterEqual, EqualEqual, NotEqual,
    AndAnd, OrOr, Bang,
    Invalid,        ///< an unknown character, or a number glued to letters ("2x")
};

struct Token {
    TokenKind kind = TokenKind::Invalid;
    std::string_view text; ///< a view into the source, which must outlive the tokens
    int line = 1;          ///< 1-based
    int column = 1;        ///< 1-based, counted in bytes
    std::size_t offset = 0;
};

/// Splits source into tokens; the last one is always EndOfFile. Comments run from '#' to the end
/// of the line. A newline ends a statement only where a statement can end: inside brackets or
/// parentheses, and after an operator, ',', ':', '=' or '?', the statement continues on the next
/// line. Runs of statement ends collapse into one, so the parser never sees empty statements.
std::vector<Token> tokenize(std::string_view source);

/// How an error message names a token: "'exp'", "'['", "end of line", "end of file",
/// "unexpected character '$'", "unexpected byte 0x00", "malformed number '2x'".
std::string describeToken(const Token &token);

} // namespace stitch::frontend::te
