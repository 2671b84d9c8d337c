// The .te language feature by feature (docs/TE.md): each program is lifted and run on tiny inputs
// whose result is known by hand.
#include "core/frontend/Lift.h"
#include "core/ir/Interpreter.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace stitch;

namespace {

frontend::LiftedProgram lift(const std::string &source, const std::string &file = "t.te")
{
    auto result = frontend::liftTensorExpressions(source, file);
    if (!result) {
        ADD_FAILURE() << result.error().toString();
        for (const Diagnostic &d : result.error().diagnostics)
            ADD_FAILURE() << d.toString();
        return frontend::LiftedProgram{{}, {}, ir::Graph(), {}, {}, {}, {}};
    }
    return std::move(result).value();
}

ir::TensorValues run(const frontend::LiftedProgram &p, const ir::TensorValues &inputs, ir::SizeBindings sizes = {})
{
    for (const auto &[name, value] : p.sizes)
        sizes.emplace(name, value);
    auto values = ir::interpret(p.graph, sizes, inputs);
    if (!values) {
        ADD_FAILURE() << values.error().toString();
        return {};
    }
    return std::move(values).value();
}

} // namespace

TEST(TeLanguage, SizesBindAndAliasesExpand)
{
    const auto p = lift("size N = 4, M\nsize N2 = N * 2\ninput X: f32[N2]\noutput Y: f32[M, N2 - 1]\n"
                        "Y[i, j] = X[j + 1]\n");
    EXPECT_EQ(p.sizes, (ir::SizeBindings{{"N", 4}}));
    EXPECT_EQ(p.graph.findTensor("X")->shape.toString(), "[N * 2]");
    EXPECT_EQ(p.graph.findTensor("Y")->shape.toString(), "[M, N * 2 - 1]");
    const auto v = run(p, {{"X", {0, 1, 2, 3, 4, 5, 6, 7}}}, {{"M", 1}});
    EXPECT_EQ(v.at("Y"), (ir::TensorData{1, 2, 3, 4, 5, 6, 7}));
}

TEST(TeLanguage, GraphNameDefaultsToTheFileStem)
{
    const std::string body = "input X: f32\noutput Y: f32\nY = X * 2.0\n";
    EXPECT_EQ(lift(body, "dir.v2/my_prog.te").graph.name(), "my_prog");
    EXPECT_EQ(lift("graph named\n" + body).graph.name(), "named");
}

TEST(TeLanguage, ScalarsCommentsSemicolonsAndContinuations)
{
    const auto p = lift("# a comment line\n"
                        "input a: f32; input b: f32[]   # two statements on one line\n"
                        "output s: f32\n"
                        "s[] = a * 2.0 +\n"
                        "      b[] * (3.0 -\n"
                        "             1.0)\n");
    EXPECT_EQ(p.graph.ops().size(), 1u);
    EXPECT_EQ(run(p, {{"a", {1.5}}, {"b", {4}}}).at("s"), (ir::TensorData{11}));
}

TEST(TeLanguage, ReductionsWithRangesAndInit)
{
    // k < i + 1: a causal prefix sum; the range may use the left-hand side's variables.
    const auto p = lift("size N\ninput X: f32[N]\n"
                        "output P: f32[N]\noutput S: f32\noutput Mx: f32\noutput Mn: f32\noutput Pr: f32\noutput T: f32\n"
                        "P[i] = sum(k < i + 1) X[k]\n"
                        "S = sum(k in [1, N), init = 100.0) X[k]\n"
                        "Mx = max(k) X[k]\n"
                        "Mn = min(k) X[k]\n"
                        "Pr = prod(k) X[k]\n"
                        "T = sum(a < 2, b < 3) f32(a * 10 + b)\n");
    const auto v = run(p, {{"X", {2, -1, 4, 3}}}, {{"N", 4}});
    EXPECT_EQ(v.at("P"), (ir::TensorData{2, 1, 5, 8}));
    EXPECT_EQ(v.at("S"), (ir::TensorData{106}));
    EXPECT_EQ(v.at("Mx"), (ir::TensorData{4}));
    EXPECT_EQ(v.at("Mn"), (ir::TensorData{-1}));
    EXPECT_EQ(v.at("Pr"), (ir::TensorData{-24}));
    EXPECT_EQ(v.at("T"), (ir::TensorData{0 + 1 + 2 + 10 + 11 + 12}));
    const ir::ComputeOp *s = p.graph.findOp("S");
    ASSERT_TRUE(s && s->reduction);
    EXPECT_EQ(s->reduction->vars[0].toString(), "k in [1, 1 + (N - 1))");
}

TEST(TeLanguage, MinAndMaxAreFunctionsUnlessTheyDeclareAVariable)
{
    const auto p = lift("size N\ninput X: f32[N]\ninput Z: f32[N]\noutput A: f32[N]\noutput B: f32\n"
                        "A[i] = max(X[i], Z[i]) - min(X[i], 0.0)\n"
                        "B = max(j) X[j] - Z[j]\n");
    EXPECT_FALSE(p.graph.findOp("A")->reduction.has_value());
    ASSERT_TRUE(p.graph.findOp("B")->reduction.has_value());
    EXPECT_EQ(p.graph.findOp("B")->toString(), "B[] = max(j) X[j] - Z[j]");
    const auto v = run(p, {{"X", {1, -2}}, {"Z", {0, 5}}}, {{"N", 2}});
    EXPECT_EQ(v.at("A"), (ir::TensorData{1, 7}));
    EXPECT_EQ(v.at("B"), (ir::TensorData{1}));
}

TEST(TeLanguage, SelectTernaryLogicAndCasts)
{
    const auto p = lift("size N\ninput X: f32[N]\ninput idx: i32[N]\noutput Y: f32[N]\noutput G: f32[N]\noutput C: i32[N]\n"
                        "Y[i] = X[i] > 0.0 && !(i == 2) ? X[i] : select(i % 2 == 0 || false, -1.0, 0.5)\n"
                        "G[i] = X[idx[i]]\n"
                        "C[i] = i32(floor(X[i] * 2.0)) // 3\n");
    const auto v = run(p, {{"X", {1, -1, 3, -3}}, {"idx", {3, 3, 0, 1}}}, {{"N", 4}});
    EXPECT_EQ(v.at("Y"), (ir::TensorData{1, 0.5, -1, 0.5}));
    EXPECT_EQ(v.at("G"), (ir::TensorData{-3, -3, 1, -1}));
    EXPECT_EQ(v.at("C"), (ir::TensorData{0, -1, 2, -2}));
}

TEST(TeLanguage, LiteralsAdoptTheirNeighboursType)
{
    const auto p = lift("size N\ninput X: f16[N]\ninput I: i64[N]\noutput Y: f16[N]\noutput J: i64[N]\n"
                        "Y[i] = 0.5 * X[i] + 1.0\nJ[i] = I[i] * 3 - -2\n");
    EXPECT_EQ(p.graph.findOp("Y")->body.dtype(), ir::DType::F16) << "a float literal must not widen float16";
    EXPECT_EQ(p.graph.findOp("J")->body.dtype(), ir::DType::I64);
    EXPECT_EQ(p.graph.findOp("J")->body.toString(), "I[i] * 3 - -2");
}

TEST(TeLanguage, FunctionsAndConstants)
{
    const auto p = lift("input x: f64\noutput y: f64\n"
                        "y = abs(-x) + exp(0.0) + log(1.0) + sqrt(4.0) + rsqrt(4.0) + tanh(0.0) + sigmoid(0.0)"
                        " + erf(0.0) + relu(-x) + floor(1.5) + ceil(1.5) + sin(0.0) + cos(0.0) + pow(x, 2.0)"
                        " + min(x, inf) + max(-inf, 0.0)\n");
    const double x = 3;
    const double expected = 3 + 1 + 0 + 2 + 0.5 + 0 + 0.5 + 0 + 0 + 1 + 2 + 0 + 1 + 9 + 3 + 0;
    EXPECT_DOUBLE_EQ(run(p, {{"x", {x}}}).at("y")[0], expected);
}

TEST(TeLanguage, OpTextParsesBackToTheSameOp)
{
    // The printer and the parser speak the same language: an op's text is valid .te.
    const std::string decls = "size M, N\ninput X: f32[M, N]\ninput b: f32[N]\noutput Y: f32[M, N]\n";
    const auto p = lift(decls + "Y[i, j] = select(X[i, j] > 0.0 && j != 0, f32(i) // 2.0, -X[i, j] % 3.0) + b[j]\n");
    const std::string text = p.graph.ops()[0].toString();
    const auto q = lift(decls + text + "\n");
    EXPECT_EQ(q.graph.toString(), p.graph.toString());
}
