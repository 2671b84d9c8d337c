// Bad .te input: every error is located at an exact line:col with a message that says what was
// expected; several errors are reported at once; nothing crashes, and hostile input is bounded.
#include "core/frontend/Lift.h"
#include "core/frontend/te/TeFrontend.h"

#include <gtest/gtest.h>

#include <random>

using namespace stitch;

namespace {

// Lines 1-3 of most cases.
const std::string kHeader = "size M, N\ninput X: f32[M, N]\noutput Y: f32[M, N]\n";

struct BadCase {
    const char *name;
    std::string source;
    int line;
    int column;
    const char *fragment;
};

std::string repeat(const std::string &s, int n)
{
    std::string out;
    for (int i = 0; i < n; ++i)
        out += s;
    return out;
}

const std::vector<BadCase> &badCases()
{
    static const std::vector<BadCase> cases = {
        // names
        {"unknown tensor", kHeader + "Y[i, j] = Z[i, j]\n", 4, 11, "unknown name 'Z': not a tensor, size or index variable"},
        {"unknown tensor on the left", kHeader + "Q[i] = 1.0\n", 4, 1, "unknown tensor 'Q': declare it before computing it"},
        {"undefined size", "size M\ninput A: f32[M, Q]\n", 2, 17, "undefined size 'Q': declare it first with 'size Q'"},
        {"unknown function", kHeader + "Y[i, j] = foo(X[i, j])\n", 4, 11, "unknown function 'foo'"},
        {"tensor called", kHeader + "Y[i, j] = X(i, j)\n", 4, 11, "'X' is a tensor: index it with [...], not (...)"},
        {"reserved name", "input exp: f32\n", 1, 7, "'exp' is a reserved word"},
        {"type name as value", kHeader + "Y[i, j] = f32\n", 4, 11, "'f32' is an element type; convert a value with f32(...)"},
        // index counts
        {"wrong index count on a read", kHeader + "Y[i, j] = X[i]\n", 4, 12, "wrong index count: 'X' has rank 2 (float32[M, N]) but 1 index is given"},
        {"wrong index count on the left", kHeader + "Y[i] = 1.0\n", 4, 1, "wrong index count: 'Y' has rank 2 (float32[M, N]) but the left-hand side names 1 index variable"},
        {"rank-2 tensor without brackets", kHeader + "Y[i, j] = X\n", 4, 11, "wrong index count: 'X' has rank 2"},
        // shapes and ranges
        {"shape mismatch", "size M, N\ninput X: f32[N, M]\noutput Y: f32[M, N]\nY[i, j] = X[i, j]\n", 4, 13,
         "shape mismatch: 'i' ranges over [0, M) (from dimension 0 of 'Y') but indexes dimension 0 of 'X', which has extent N"},
        {"shape mismatch of an inferred reduction", "size M, N, K\ninput A: f32[M, K]\ninput B: f32[N, N]\noutput C: f32[M, N]\nC[i, j] = sum(k) A[i, k] * B[k, j]\n",
         5, 30, "shape mismatch: 'k' ranges over [0, K) (from dimension 1 of 'A' at 5:23) but indexes dimension 0 of 'B'"},
        {"concrete range out of bounds", "input X: f32[4]\noutput s: f32\ns = sum(k < 5) X[k]\n", 3, 18, "shape mismatch: 'k' ranges over [0, 5)"},
        {"reduction variable not bound", "size N\ninput X: f32[N]\noutput s: f32\ns = sum(k) X[0] * 2.0\n", 4, 9,
         "reduction variable 'k' is not bound"},
        {"reduction variable in its init", "size N\ninput X: f32[N]\noutput s: f32\ns = sum(k, init = X[k]) X[k]\n", 4, 21,
         "the init cannot use the reduction variable 'k'"},
        {"range reads a tensor", "size N\ninput X: f32[N]\noutput s: f32\ns = sum(k < X[0]) 1.0\n", 4, 13, "a reduction range cannot depend on tensor data"},
        {"negative dimension", "input X: f32[2 - 3]\n", 1, 14, "dimension 0 of 'X' is negative (-1)"},
        {"non-integer size operation", "size N\ninput X: f32[select(N > 2, N, 2)]\n", 2, 14, "may use only integer constants, sizes"},
        {"size out of range", "size N = 3000000000\n", 1, 10, "size 'N' must be between 0 and 2147483647"},
        {"too many dimensions", "input X: f32[1, 1, 1, 1, 1, 1, 1, 1, 1]\n", 1, 38, "too many dimensions for 'X': the rank is at most 8"},
        // types
        {"bool operand of &&", kHeader + "Y[i, j] = X[i, j] && true\n", 4, 19, "type error: the left operand of '&&' has type float32, expected bool"},
        {"float index", kHeader + "Y[i, j] = X[i, 1.5]\n", 4, 16, "type error: index 1 of 'X' has type float32, expected an integer"},
        {"float into an int tensor", "input X: f32[4]\noutput Y: i32[4]\nY[i] = X[i]\n", 3, 8,
         "type error: 'Y' is int32 but the right-hand side has type float32; convert explicitly with i32(...)"},
        {"bool into a float tensor", kHeader + "Y[i, j] = X[i, j] > 0.0\n", 4, 11, "'Y' is float32 but the right-hand side has type bool"},
        {"select branch types", kHeader + "Y[i, j] = select(X[i, j] > 0.0, true, 1.0)\n", 4, 11,
         "the branches of 'select' have types bool and float32"},
        {"select condition", kHeader + "Y[i, j] = select(X[i, j], 1.0, 2.0)\n", 4, 18, "the condition of 'select' has type float32, expected bool"},
        {"arithmetic on bool", kHeader + "Y[i, j] = (X[i, j] > 0.0) + 1.0\n", 4, 27, "the left operand of '+' has type bool, expected a number"},
        {"comparing bool with number", kHeader + "Y[i, j] = select((X[i, j] > 0.0) == 1, 1.0, 0.0)\n", 4, 34, "'==' compares bool with int32"},
        {"chained comparison", kHeader + "Y[i, j] = select(0.0 < X[i, j] < 1.0, 1.0, 0.0)\n", 4, 32, "chained comparison"},
        // duplicates
        {"duplicate tensor", kHeader + "input X: f32[M]\n", 4, 7, "duplicate definition: 'X' is already declared as a tensor at 2:7"},
        {"duplicate size", "size M\nsize M\n", 2, 6, "duplicate definition: 'M' is already declared as a size at 1:6"},
        {"size and tensor share a name", "size M\ninput M: f32\n", 2, 7, "duplicate definition: 'M' is already declared as a size"},
        {"computed twice", kHeader + "Y[i, j] = X[i, j]\nY[i, j] = 2.0\n", 5, 1, "duplicate definition: 'Y' is already computed at 4:1"},
        {"duplicate index variable", kHeader + "Y[i, i] = X[i, i]\n", 4, 6, "index variable 'i' appears twice on the left-hand side"},
        {"reduction variable shadows an index", kHeader + "Y[i, j] = sum(j) X[i, j]\n", 4, 15, "'j' is already an index variable of this statement"},
        {"graph named twice", "graph a\ngraph b\n", 2, 7, "the graph is already named at 1:7"},
        // dataflow
        {"read before computed", kHeader + "tensor T: f32[M, N]\nY[i, j] = T[i, j]\nT[i, j] = X[i, j]\n", 5, 11,
         "'T' is read before it is computed"},
        {"self read", kHeader + "Y[i, j] = Y[i, j] + 1.0\n", 4, 11, "'Y' is read in its own definition"},
        {"computing an input", kHeader + "X[i, j] = 1.0\n", 4, 1, "'X' is an input and cannot be computed"},
        {"output never computed", kHeader + "tensor T: f32[M]\n", 3, 8, "output 'Y' is never computed"},
        {"no output", "size M\ninput X: f32[M]\n", 3, 1, "the program declares no output"},
        {"reduction inside an expression", kHeader + "Y[i, j] = 1.0 + sum(k) X[i, k]\n", 4, 17, "'sum' starts a reduction, which must be the whole right-hand side"},
        // syntax
        {"unexpected character", kHeader + "Y[i, j] = X[i, j] $ 2\n", 4, 19, "found unexpected character '$'"},
        {"malformed number", kHeader + "Y[i, j] = 2x\n", 4, 11, "found malformed number '2x'"},
        {"integer too large", kHeader + "Y[i, j] = 99999999999999999999\n", 4, 11, "does not fit in 64 bits"},
        {"float out of range", kHeader + "Y[i, j] = 1e999\n", 4, 11, "floating-point literal '1e999' is out of range"},
        {"missing ]", kHeader + "Y[i, j] = X[i, j\n", 5, 1, "expected ',' or ']' in the index list of 'X' opened at 4:12, found end of file"},
        {"missing operator", kHeader + "Y[i, j] = X[i, j] X[i, j]\n", 4, 19, "expected end of line after the right-hand side (is an operator missing?)"},
        {"missing =", kHeader + "Y[i, j] X[i, j]\n", 4, 9, "expected '=' after the left-hand side, found 'X'"},
        {"expression on the left", kHeader + "Y[i + 1, j] = X[i, j]\n", 4, 5, "expected ',' or ']' on the left-hand side"},
        {"wrong argument count", kHeader + "Y[i, j] = exp(X[i, j], 2.0)\n", 4, 24, "'exp' takes 1 argument, but more are given"},
        {"too few arguments", kHeader + "Y[i, j] = pow(X[i, j])\n", 4, 22, "'pow' takes 2 arguments, but 1 is given"},
        {"unknown element type", "input X: f33[4]\n", 1, 10, "unknown element type 'f33'; expected f32, f64, f16, bf16, i32, i64 or bool"},
        {"missing colon", "input X f32[4]\n", 1, 9, "expected ':' and an element type after 'X'"},
        {"statement starts with a number", "42\n", 1, 1, "expected a declaration (graph, size, input, output, tensor) or a statement"},
        {"half-open range closed with ]", "size N\ninput X: f32[N]\noutput s: f32\ns = sum(k in [0, N]) X[k]\n", 4, 19,
         "expected ')' to close the range opened at 4:14 (ranges are half-open: [lo, hi))"},
        {"empty reduction", kHeader + "Y[i, j] = sum() X[i, j]\n", 4, 15, "expected a reduction variable in 'sum(...)' at 4:11"},
        {"nul byte", kHeader + std::string("Y[i, j] = X[i, j]\0\n", 19), 4, 18, "found unexpected byte 0x00"},
        // limits
        {"nesting limit", kHeader + "Y[i, j] = " + repeat("(", 100) + "1.0" + repeat(")", 100) + "\n", 4, 75, "expression nested too deeply"},
        {"unary nesting limit", kHeader + "Y[i, j] = " + repeat("-", 100) + "1.0\n", 4, 74, "expression nested too deeply"},
        {"height limit", kHeader + "Y[i, j] = X[i, j]" + repeat(" + 1.0", 250) + "\n", 4, 11, "expression too deep: more than 200 operators"},
        {"alias limit", "size N\nsize A = N" + repeat(" + N", 70) + "\n", 2, 10, "the value of size 'A' is too large"},
    };
    return cases;
}

} // namespace

TEST(TeErrors, EachBadInputIsLocatedAndExplained)
{
    for (const BadCase &c : badCases()) {
        SCOPED_TRACE(c.name);
        const auto result = frontend::liftTensorExpressions(c.source, "bad.te");
        ASSERT_FALSE(result.ok());
        const Error &e = result.error();
        EXPECT_EQ(e.kind, ErrorKind::Parse);
        ASSERT_TRUE(e.location.has_value());
        EXPECT_EQ(e.location->file, "bad.te");
        EXPECT_EQ(e.location->line, c.line) << e.toString();
        EXPECT_EQ(e.location->column, c.column) << e.toString();
        EXPECT_NE(e.message.find(c.fragment), std::string::npos) << "message: " << e.message;
        ASSERT_FALSE(e.diagnostics.empty());
        const std::string prefix = "bad.te:" + std::to_string(c.line) + ":" + std::to_string(c.column) + ": error: ";
        EXPECT_EQ(e.diagnostics.front().toString().rfind(prefix, 0), 0u) << e.diagnostics.front().toString();
    }
}

TEST(TeErrors, ReportsEveryBadStatementAndRecovers)
{
    const std::string source = kHeader + "Y[i, j] = X[i]\n"   // 4: wrong index count
                               "tensor T: f33[M]\n"             // 5: unknown type
                               "Y[i, j] = X[i, j] + $\n";       // 6: unexpected character
    const auto result = frontend::liftTensorExpressions(source, "bad.te");
    ASSERT_FALSE(result.ok());
    const auto &d = result.error().diagnostics;
    ASSERT_EQ(d.size(), 3u) << result.error().toString();
    EXPECT_EQ(d[0].location.line, 4);
    EXPECT_EQ(d[1].location.line, 5);
    EXPECT_EQ(d[2].location.line, 6);
    EXPECT_NE(result.error().message.find("(and 2 more)"), std::string::npos);
}

TEST(TeErrors, StopsAfterTooManyErrors)
{
    const auto result = frontend::liftTensorExpressions(repeat("$\n", 1000), "bad.te");
    ASSERT_FALSE(result.ok());
    const auto &d = result.error().diagnostics;
    ASSERT_EQ(d.size(), 21u);
    EXPECT_EQ(d.back().severity, Severity::Note);
    EXPECT_EQ(d.back().message, "too many errors; stopped here");
}

TEST(TeErrors, LimitsOnStatementsAndSize)
{
    // A chain of n computations: T0 from X, each T from the one before, Y from the last.
    auto chain = [](int n) {
        std::string text = "size N\ninput X: f32[N]\noutput Y: f32[N]\n";
        for (int k = 0; k < n; ++k)
            text += "tensor T" + std::to_string(k) + ": f32[N]\n";
        text += "T0[i] = X[i] + 1.0\n";
        for (int k = 1; k < n; ++k)
            text += "T" + std::to_string(k) + "[i] = T" + std::to_string(k - 1) + "[i] * 0.5\n";
        return text + "Y[i] = T" + std::to_string(n - 1) + "[i]\n";
    };
    // Up to the limit (4096 computations) a program lifts: adding an op to the graph is cheap.
    const frontend::te::Limits limits;
    const auto large = frontend::liftTensorExpressions(chain(limits.maxStatements - 1), "large.te");
    ASSERT_TRUE(large.ok()) << large.error().toString();
    EXPECT_EQ(static_cast<int>(large->graph.ops().size()), limits.maxStatements);
    EXPECT_EQ(large->graph.ops().back().name, "Y");

    const int n = limits.maxStatements + 10;
    const auto result = frontend::liftTensorExpressions(chain(n), "many.te");
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.error().location->line, 3 + n + limits.maxStatements + 1);
    EXPECT_NE(result.error().message.find("too many statements: at most 4096 computations per file"),
              std::string::npos) << result.error().message;

    frontend::te::Limits small;
    small.maxSourceBytes = 10;
    const auto big = frontend::te::parseTensorExpressions("size N, M, K\n", "big.te", small);
    ASSERT_FALSE(big.ok());
    EXPECT_EQ(big.error().location->line, 1);
    EXPECT_NE(big.error().message.find("file too large: 13 bytes, the limit is 10"), std::string::npos);
}

TEST(TeErrors, WarningsDoNotFail)
{
    const auto result = frontend::liftTensorExpressions(
        "size N\ninput X: f32[N]\ninput unused: f32[N]\ntensor T: f32[N]\noutput Y: f32[N]\nT[i] = X[i]\nY[i] = X[i]\n",
        "warn.te");
    ASSERT_TRUE(result.ok()) << result.error().toString();
    ASSERT_EQ(result->diagnostics.size(), 2u);
    EXPECT_EQ(result->diagnostics[0].toString(), "warn.te:3:7: warning: input 'unused' is never read");
    EXPECT_EQ(result->diagnostics[1].toString(),
              "warn.te:4:8: warning: tensor 'T' is computed but never read; declare it with 'output' to return it");
}

TEST(TeErrors, MutatedExamplesNeverCrash)
{
    // A cheap, deterministic cousin of the libFuzzer target (tests/fuzz): byte flips, deletions and
    // insertions of program text must give a program or a located error, never a crash.
    const std::string seed = kHeader + "tensor T: f32[M]\nT[i] = sum(j, init = 0.5) exp(X[i, j] - 1.0)\n"
                                       "Y[i, j] = select(X[i, j] > T[i], X[i, j], -T[i]) / f32(N)\n";
    const std::string alphabet = "[](),:=?+-*/%<>!&|#;\n ijkMNXYT0123456789.e sum max init in f32 select";
    std::mt19937 rng(1234);
    for (int iteration = 0; iteration < 3000; ++iteration) {
        std::string text = seed;
        const int edits = 1 + static_cast<int>(rng() % 4);
        for (int e = 0; e < edits && !text.empty(); ++e) {
            const std::size_t at = rng() % text.size();
            switch (rng() % 3) {
            case 0: text[at] = alphabet[rng() % alphabet.size()]; break;
            case 1: text.erase(at, 1 + rng() % 3); break;
            default: text.insert(at, 1, alphabet[rng() % alphabet.size()]); break;
            }
        }
        const auto result = frontend::liftTensorExpressions(text, "mutant.te");
        if (!result.ok()) {
            ASSERT_TRUE(result.error().location.has_value()) << text;
            EXPECT_GT(result.error().location->line, 0) << text;
        } else {
            EXPECT_TRUE(result->graph.validate().ok()) << text;
        }
    }
}
