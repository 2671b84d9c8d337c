#include "core/ir/Interpreter.h"
#include "core/ir/Programs.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace stitch::ir;

TEST(Programs, ShapesOpsAndTypes)
{
    const Graph matmul = makeMatmul();
    EXPECT_EQ(matmul.name(), "matmul");
    EXPECT_EQ(matmul.ops().size(), 1u);
    EXPECT_EQ(matmul.sizeVars(), (std::vector<std::string>{"M", "K", "N"}));

    const Graph softmax = makeSoftmaxRows();
    ASSERT_EQ(softmax.ops().size(), 3u);
    EXPECT_EQ(softmax.ops()[0].reduction->kind, ReduceKind::Max);
    EXPECT_EQ(softmax.ops()[1].reduction->kind, ReduceKind::Sum);
    EXPECT_FALSE(softmax.ops()[2].reduction.has_value());

    const Graph chain = makeElementwiseChain();
    ASSERT_EQ(chain.ops().size(), 5u);
    for (const ComputeOp &op : chain.ops())
        EXPECT_FALSE(op.reduction.has_value()) << op.toString();
    EXPECT_EQ(chain.ops()[3].toString(), "t3[i, j] = t2[i, j] * 0.5 - X[i, j]");

    const Graph gelu = makeGemmBiasGelu();
    ASSERT_EQ(gelu.ops().size(), 3u);
    EXPECT_EQ(gelu.ops()[2].toString(), "Y[i, j] = 0.5 * H[i, j] * (1.0 + erf(H[i, j] * 0.7071067811865476))");

    const Graph half = makeGemmBiasGelu(DType::F16);
    for (const Tensor &t : half.tensors())
        EXPECT_EQ(t.dtype, DType::F16) << t.name;
    EXPECT_EQ(half.ops()[2].body.dtype(), DType::F16) << "literals must not widen a half expression";
    EXPECT_TRUE(half.validate().ok());
}

TEST(Programs, RunOnTinyInputs)
{
    // 2x2 matmul by hand: [[1, 2], [3, 4]] x [[5, 6], [7, 8]] = [[19, 22], [43, 50]].
    auto c = interpret(makeMatmul(DType::F64), {{"M", 2}, {"N", 2}, {"K", 2}},
                       {{"A", {1, 2, 3, 4}}, {"B", {5, 6, 7, 8}}});
    ASSERT_TRUE(c.ok()) << c.error().toString();
    EXPECT_EQ(c->at("C"), (TensorData{19, 22, 43, 50}));

    // Softmax of [0, ln 3] is [1/4, 3/4].
    auto s = interpret(makeSoftmaxRows(), {{"M", 1}, {"N", 2}}, {{"X", {0.0, std::log(3.0)}}});
    ASSERT_TRUE(s.ok()) << s.error().toString();
    EXPECT_NEAR(s->at("Y")[0], 0.25, 1e-15);
    EXPECT_NEAR(s->at("Y")[1], 0.75, 1e-15);
}
