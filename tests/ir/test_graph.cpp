#include "core/ir/Graph.h"
#include "core/ir/GraphBuilder.h"
#include "core/ir/Programs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

using namespace stitch::ir;
using stitch::ErrorKind;
using stitch::Status;

namespace {

// True when some diagnostic of a failed status contains text.
bool mentions(const Status &status, const std::string &text)
{
    if (status.ok())
        return false;
    const auto &diags = status.error().diagnostics;
    return std::any_of(diags.begin(), diags.end(),
                       [&](const stitch::Diagnostic &d) { return d.message.find(text) != std::string::npos; });
}

std::string allMessages(const Status &status)
{
    if (status.ok())
        return "(ok)";
    std::string text;
    for (const auto &d : status.error().diagnostics)
        text += d.message + "\n";
    return text;
}

struct Fixture {
    GraphBuilder b{"test"};
    Expr M = sizeVar("M");
    Expr N = sizeVar("N");
    Expr i = var("i");
    Expr j = var("j");
    Expr k = var("k");
};

} // namespace

TEST(ComputeOp, PrintsLikeTensorExpressions)
{
    const Graph g = makeMatmul();
    ASSERT_EQ(g.ops().size(), 1u);
    EXPECT_EQ(g.ops()[0].toString(), "C[i, j] = sum(k) A[i, k] * B[k, j]");
    EXPECT_EQ(g.ops()[0].domainString(), "i < M, j < N, k < K");
    EXPECT_EQ(g.ops()[0].outputAccess().toString(), "C[i, j]");
}

TEST(ComputeOp, PrintsInitAndLowerBounds)
{
    Fixture f;
    const Expr K = sizeVar("K");
    const Tensor A = f.b.input("A", DType::F32, {f.M, K});
    const Tensor B = f.b.input("B", DType::F32, {K, f.N});
    const Tensor bias = f.b.input("bias", DType::F32, {f.N});
    const Tensor C = f.b.output("C", DType::F32, {f.M, f.N});
    ComputeOp &op = f.b.compute(C, {f.i, f.j}, reduceSum({{"k", K}}, bias(f.j)), A(f.i, f.k) * B(f.k, f.j));
    EXPECT_EQ(op.toString(), "C[i, j] = sum(k, init=bias[j]) A[i, k] * B[k, j]");

    EXPECT_EQ(IterVar("i", f.N - 2, 1).toString(), "i in [1, 1 + (N - 2))");
    EXPECT_EQ(IterVar("i", 8, 2).toString(), "i in [2, 10)");
    EXPECT_EQ(IterVar("k", f.i + 1).toString(), "k < i + 1");
    EXPECT_EQ(reduceMax({{"j", f.N}}).initValue(DType::F32).toString(), "-inf");
    EXPECT_EQ(reduceProd({{"j", f.N}}).initValue(DType::I32).toString(), "1");
    EXPECT_EQ(reduceMin({{"j", f.N}}).initValue(DType::I32).toString(), "2147483647");
}

TEST(Graph, ToStringPrintsTheWholeProgram)
{
    EXPECT_EQ(makeMatmul().toString(),
              "graph matmul sizes M, K, N\n"
              "input A: float32[M, K]\n"
              "input B: float32[K, N]\n"
              "output C: float32[M, N]\n"
              "C[i, j] = sum(k) A[i, k] * B[k, j]  where i < M, j < N, k < K\n");
    EXPECT_EQ(makeSoftmaxRows().toString(),
              "graph softmax_rows sizes M, N\n"
              "input X: float32[M, N]\n"
              "intermediate rowMax: float32[M]\n"
              "intermediate rowSum: float32[M]\n"
              "output Y: float32[M, N]\n"
              "rowMax[i] = max(j) X[i, j]  where i < M, j < N\n"
              "rowSum[i] = sum(j) exp(X[i, j] - rowMax[i])  where i < M, j < N\n"
              "Y[i, j] = exp(X[i, j] - rowMax[i]) / rowSum[i]  where i < M, j < N\n");
}

TEST(Graph, ProducersAndConsumers)
{
    const Graph g = makeSoftmaxRows();
    const Tensor *x = g.findTensor("X");
    const Tensor *rowMax = g.findTensor("rowMax");
    const Tensor *y = g.findTensor("Y");
    ASSERT_TRUE(x && rowMax && y);

    EXPECT_EQ(g.producer(x->id), nullptr);
    ASSERT_NE(g.producer(rowMax->id), nullptr);
    EXPECT_EQ(g.producer(rowMax->id)->name, "rowMax");
    EXPECT_EQ(g.producer(y->id)->name, "Y");

    auto names = [](const std::vector<const ComputeOp *> &ops) {
        std::vector<std::string> result;
        for (const ComputeOp *op : ops)
            result.push_back(op->name);
        return result;
    };
    EXPECT_EQ(names(g.consumers(x->id)), (std::vector<std::string>{"rowMax", "rowSum", "Y"}));
    EXPECT_EQ(names(g.consumers(rowMax->id)), (std::vector<std::string>{"rowSum", "Y"}));
    EXPECT_TRUE(g.consumers(y->id).empty());

    EXPECT_EQ(g.inputs().size(), 1u);
    EXPECT_EQ(g.outputs().size(), 1u);
    EXPECT_EQ(g.findOp("rowSum")->output.name, "rowSum");
    EXPECT_EQ(g.findOp("nope"), nullptr);
    EXPECT_EQ(g.tensor(99), nullptr);
    EXPECT_EQ(g.sizeVars(), (std::vector<std::string>{"M", "N"}));
}

TEST(Graph, KeepsOpsInTopologicalOrder)
{
    Fixture f;
    const Tensor X = f.b.input("X", DType::F32, {f.N});
    const Tensor T = f.b.intermediate("T", DType::F32, {f.N});
    const Tensor U = f.b.intermediate("U", DType::F32, {f.N});
    const Tensor Y = f.b.output("Y", DType::F32, {f.N});
    // Consumers first: the graph must put producers before them.
    f.b.compute(Y, {f.i}, U(f.i) + T(f.i));
    f.b.compute(U, {f.i}, T(f.i) * 2.0);
    f.b.compute(T, {f.i}, X(f.i) + 1.0);
    auto g = f.b.build();
    ASSERT_TRUE(g.ok()) << g.error().toString();
    ASSERT_EQ(g->ops().size(), 3u);
    EXPECT_EQ(g->ops()[0].name, "T");
    EXPECT_EQ(g->ops()[1].name, "U");
    EXPECT_EQ(g->ops()[2].name, "Y");
}

namespace {

// The order Graph kept before adding became incremental: after every add, repeatedly take the
// earliest op whose producers are all placed; leave the list as it is when the ops form a cycle.
std::vector<std::string> earliestReadyOrder(std::vector<ComputeOp> &ops)
{
    const std::size_t n = ops.size();
    auto dependsOn = [&](std::size_t consumer, std::size_t producer) {
        return consumer != producer && ops[consumer].reads(ops[producer].output.id);
    };
    std::vector<bool> placed(n, false);
    std::vector<std::size_t> order;
    while (order.size() < n) {
        bool progress = false;
        for (std::size_t i = 0; i < n && !progress; ++i) {
            if (placed[i])
                continue;
            bool ready = true;
            for (std::size_t j = 0; j < n && ready; ++j)
                ready = placed[j] || !dependsOn(i, j);
            if (ready) {
                placed[i] = true;
                order.push_back(i);
                progress = true;
            }
        }
        if (!progress)
            break;
    }
    if (order.size() == n) {
        std::vector<ComputeOp> sorted;
        for (std::size_t i : order)
            sorted.push_back(ops[i]);
        ops = std::move(sorted);
    }
    std::vector<std::string> names;
    for (const ComputeOp &op : ops)
        names.push_back(op.name);
    return names;
}

std::vector<std::string> opNames(const Graph &g)
{
    std::vector<std::string> names;
    for (const ComputeOp &op : g.ops())
        names.push_back(op.name);
    return names;
}

/// n ops, op k writing T<k> from T<k-1> (T0 from the input X), added in the given order.
Graph chain(int n, bool consumersFirst)
{
    Graph g("chain");
    const Expr N = sizeVar("N");
    std::vector<Tensor> t{g.addTensor("X", DType::F32, Shape({N}), TensorRole::Input)};
    for (int k = 0; k < n; ++k) {
        const TensorRole role = k + 1 == n ? TensorRole::Output : TensorRole::Intermediate;
        t.push_back(g.addTensor("T" + std::to_string(k), DType::F32, Shape({N}), role));
    }
    for (int step = 0; step < n; ++step) {
        const int k = consumersFirst ? n - 1 - step : step;
        ComputeOp op;
        op.name = "op" + std::to_string(k);
        op.output = t[static_cast<std::size_t>(k) + 1].ref();
        op.domain.emplace_back("i", N);
        op.body = t[static_cast<std::size_t>(k)](var("i")) + 1.0;
        g.addOp(std::move(op));
    }
    return g;
}

} // namespace

TEST(Graph, OrderAfterEveryAddIsTheEarliestReadyOrder)
{
    // Random graphs, cycles and tensors written twice included: the incremental order must be
    // exactly the one a full earliest-ready sort gives after each add.
    std::mt19937 random(12345);
    for (int trial = 0; trial < 300; ++trial) {
        const int tensorCount = 2 + static_cast<int>(random() % 8);
        const int opCount = 1 + static_cast<int>(random() % 10);
        Graph g("random");
        const Expr N = sizeVar("N");
        std::vector<Tensor> tensors;
        for (int t = 0; t < tensorCount; ++t)
            tensors.push_back(g.addTensor("T" + std::to_string(t), DType::F32, Shape({N}), TensorRole::Intermediate));
        std::vector<ComputeOp> reference;
        for (int k = 0; k < opCount; ++k) {
            ComputeOp op;
            op.name = "op" + std::to_string(k);
            op.output = tensors[random() % tensors.size()].ref();
            op.domain.emplace_back("i", N);
            op.body = Expr(0.0);
            for (const Tensor &t : tensors) {
                if (random() % 3 == 0)
                    op.body = op.body + t(var("i"));
            }
            reference.push_back(op);
            g.addOp(std::move(op));
            ASSERT_EQ(opNames(g), earliestReadyOrder(reference)) << "trial " << trial << ", op " << k;
        }
    }
}

TEST(Graph, ThousandsOfOpsAreCheapToAddAndValidate)
{
    // Adding used to re-sort every op with an O(n^3) scan; validate's cycle search recursed once
    // per op of a chain.
    const Graph forward = chain(20000, false);
    ASSERT_EQ(forward.ops().size(), 20000u);
    EXPECT_EQ(forward.ops().front().name, "op0");
    EXPECT_EQ(forward.ops().back().name, "op19999");
    EXPECT_TRUE(forward.validate().ok()) << forward.validate().error().toString();

    const Graph backward = chain(1000, true);
    const std::vector<std::string> names = opNames(backward);
    for (std::size_t k = 0; k < names.size(); ++k)
        ASSERT_EQ(names[k], "op" + std::to_string(k));
    EXPECT_TRUE(backward.validate().ok()) << backward.validate().error().toString();
}

TEST(GraphValidate, LongCycleIsReported)
{
    Graph g = chain(3000, false);
    ComputeOp closing;
    closing.name = "closing";
    closing.output = g.findTensor("X")->ref();
    closing.domain.emplace_back("i", sizeVar("N"));
    closing.body = g.findTensor("T2999")->at({var("i")});
    g.addOp(std::move(closing));
    const Status s = g.validate();
    EXPECT_TRUE(mentions(s, "ops form a cycle: op 'op0' -> op 'op1' -> ")) << allMessages(s).substr(0, 300);
    EXPECT_TRUE(mentions(s, "op 'op2999' -> op 'closing' -> op 'op0'")) << allMessages(s).substr(0, 300);
}

TEST(GraphValidate, CanonicalProgramsAreValid)
{
    for (const Graph &g : {makeMatmul(), makeSoftmaxRows(), makeElementwiseChain(), makeGemmBiasGelu(),
                           makeMatmul(DType::F64)}) {
        const Status s = g.validate();
        EXPECT_TRUE(s.ok()) << g.name() << ": " << allMessages(s);
    }
}

TEST(GraphValidate, TensorWrittenTwice)
{
    Fixture f;
    const Tensor X = f.b.input("X", DType::F32, {f.N});
    const Tensor Y = f.b.output("Y", DType::F32, {f.N});
    f.b.compute(Y, {f.i}, X(f.i)).name = "first";
    f.b.compute(Y, {f.i}, X(f.i) * 2.0).name = "second";
    const Status s = f.b.finish().validate();
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().kind, ErrorKind::InvalidArgument);
    EXPECT_TRUE(mentions(s, "tensor 'Y' is written by both op 'first' and op 'second'")) << allMessages(s);
}

TEST(GraphValidate, ReadOfTensorNobodyWrites)
{
    Fixture f;
    const Tensor T = f.b.intermediate("T", DType::F32, {f.N});
    const Tensor Y = f.b.output("Y", DType::F32, {f.N});
    f.b.compute(Y, {f.i}, T(f.i));
    const Status s = f.b.finish().validate();
    EXPECT_TRUE(mentions(s, "op 'Y' reads 'T', which no op writes and which is not an input")) << allMessages(s);
}

TEST(GraphValidate, IndexArityMustMatchRank)
{
    Fixture f;
    const Tensor X = f.b.input("X", DType::F32, {f.M, f.N});
    const Tensor Y = f.b.output("Y", DType::F32, {f.M});
    f.b.compute(Y, {f.i}, X(f.i));
    const Status s = f.b.finish().validate();
    EXPECT_TRUE(mentions(s, "read X[i] has 1 indices but 'X' has rank 2")) << allMessages(s);
}

TEST(GraphValidate, UnknownVariableInBody)
{
    Fixture f;
    const Tensor X = f.b.input("X", DType::F32, {f.M, f.N});
    const Tensor Y = f.b.output("Y", DType::F32, {f.M});
    f.b.compute(Y, {f.i}, X(f.i, f.j));
    const Status s = f.b.finish().validate();
    EXPECT_TRUE(mentions(s, "body of op 'Y' uses unknown iteration variable 'j'")) << allMessages(s);
}

TEST(GraphValidate, CycleBetweenOps)
{
    Fixture f;
    const Tensor X = f.b.input("X", DType::F32, {f.N});
    const Tensor P = f.b.intermediate("P", DType::F32, {f.N});
    const Tensor Q = f.b.intermediate("Q", DType::F32, {f.N});
    const Tensor Y = f.b.output("Y", DType::F32, {f.N});
    f.b.compute(P, {f.i}, Q(f.i) + X(f.i));
    f.b.compute(Q, {f.i}, P(f.i) * 2.0);
    f.b.compute(Y, {f.i}, Q(f.i));
    const Status s = f.b.finish().validate();
    EXPECT_TRUE(mentions(s, "ops form a cycle: op 'P' -> op 'Q' -> op 'P'")) << allMessages(s);
}

TEST(GraphValidate, OpReadingItsOwnOutput)
{
    Fixture f;
    const Tensor Y = f.b.output("Y", DType::F32, {f.N});
    f.b.compute(Y, {f.i}, Y(f.i) + 1.0);
    const Status s = f.b.finish().validate();
    EXPECT_TRUE(mentions(s, "op 'Y' reads its own output 'Y'")) << allMessages(s);
}

TEST(GraphValidate, DomainMustMatchOutputRank)
{
    Fixture f;
    const Tensor X = f.b.input("X", DType::F32, {f.M, f.N});
    const Tensor Y = f.b.output("Y", DType::F32, {f.M, f.N});
    f.b.compute(Y, {f.i}, X(f.i, 0));
    const Status s = f.b.finish().validate();
    EXPECT_TRUE(mentions(s, "op 'Y' has 1 spatial iteration variables but 'Y' has rank 2")) << allMessages(s);
}

TEST(GraphValidate, OutputsMustBeWrittenAndInputsNot)
{
    Fixture f;
    const Tensor X = f.b.input("X", DType::F32, {f.N});
    f.b.output("Y", DType::F32, {f.N});
    f.b.compute(X, {f.i}, 1.0);
    const Status s = f.b.finish().validate();
    EXPECT_TRUE(mentions(s, "output 'Y' is never written")) << allMessages(s);
    EXPECT_TRUE(mentions(s, "op 'X' writes input tensor 'X'")) << allMessages(s);
    EXPECT_NE(s.error().message.find("(and 1 more)"), std::string::npos) << s.error().message;
    EXPECT_EQ(s.error().message.rfind("graph 'test': ", 0), 0u) << s.error().message;
}

TEST(GraphValidate, NamesMustBeUnique)
{
    Fixture f;
    const Tensor X = f.b.input("X", DType::F32, {f.N});
    const Tensor X2 = f.b.output("X", DType::F32, {f.N});
    f.b.compute(X2, {f.i}, X(f.i));
    const Status s = f.b.finish().validate();
    EXPECT_TRUE(mentions(s, "duplicate tensor name 'X'")) << allMessages(s);
}

TEST(GraphValidate, IndicesMustBeIntegers)
{
    Fixture f;
    const Tensor X = f.b.input("X", DType::F32, {f.N});
    const Tensor Y = f.b.output("Y", DType::F32, {f.N});
    f.b.compute(Y, {f.i}, X(X(f.i)));
    const Status s = f.b.finish().validate();
    EXPECT_TRUE(mentions(s, "index 0 of X[X[i]] has type float32, not an integer type")) << allMessages(s);
}

TEST(GraphValidate, RangesUseOnlyWhatTheyMay)
{
    Fixture f;
    const Tensor X = f.b.input("X", DType::F32, {f.M, f.N});
    const Tensor Y = f.b.output("Y", DType::F32, {f.M});
    ComputeOp op;
    op.name = "Y";
    op.output = Y.ref();
    op.domain = {IterVar("i", f.k)};                                  // spatial extent uses a reduction var
    op.reduction = reduceSum({IterVar("k", X(f.i, 0) > 0.0)}, X(f.i, f.k)); // data-dependent range, init uses k
    op.body = X(f.i, f.k);
    f.b.add(op);
    const Status s = f.b.finish().validate();
    EXPECT_TRUE(mentions(s, "extent of 'i' in op 'Y' uses unknown iteration variable 'k'; spatial ranges may use only sizes"))
        << allMessages(s);
    EXPECT_TRUE(mentions(s, "extent of 'k' in op 'Y' reads tensor 'X'; ranges cannot depend on tensor data"))
        << allMessages(s);
    EXPECT_TRUE(mentions(s, "extent of 'k' in op 'Y' has type bool, not an integer type")) << allMessages(s);
    EXPECT_TRUE(mentions(s, "init of op 'Y' uses unknown iteration variable 'k'")) << allMessages(s);
}

TEST(GraphValidate, TriangularReductionRangeIsAllowed)
{
    Fixture f;
    const Tensor X = f.b.input("X", DType::F32, {f.N});
    const Tensor S = f.b.output("S", DType::F32, {f.N});
    f.b.compute(S, {f.i}, reduceSum({{"k", f.i + 1}}), X(f.k));
    EXPECT_TRUE(f.b.build().ok());
}

TEST(GraphValidate, MissingPiecesAreReported)
{
    Fixture f;
    const Tensor X = f.b.input("X", DType::F32, {f.N});
    const Tensor Y = f.b.output("Y", DType::F32, {f.N});
    const Tensor Z = f.b.output("Z", DType::F32, {f.N});
    const Tensor W = f.b.output("W", DType::F32, {f.N});
    f.b.compute(Y, {f.i}, Expr());
    f.b.compute(Z, {f.i}, X(f.i) + Expr());
    f.b.compute(W, {f.i}, Reduction{ReduceKind::Sum, {}, {}}, X(f.i));
    const Status s = f.b.finish().validate();
    EXPECT_TRUE(mentions(s, "body of op 'Y' is undefined")) << allMessages(s);
    EXPECT_TRUE(mentions(s, "body of op 'Z' has an undefined sub-expression")) << allMessages(s);
    EXPECT_TRUE(mentions(s, "op 'W' has a reduction without reduction variables")) << allMessages(s);
}

TEST(GraphValidate, BuilderRejectsNonVariableIndices)
{
    Fixture f;
    const Tensor X = f.b.input("X", DType::F32, {f.N});
    const Tensor Y = f.b.output("Y", DType::F32, {f.N});
    f.b.compute(Y, {f.i + 1}, X(f.i));
    auto g = f.b.build();
    ASSERT_FALSE(g.ok());
    EXPECT_NE(g.error().toString().find("op 'Y' has an iteration variable without a name"), std::string::npos)
        << g.error().toString();
}

TEST(GraphValidate, DiagnosticsCarryTheOpSourceLocation)
{
    Fixture f;
    const Tensor X = f.b.input("X", DType::F32, {f.M, f.N});
    const Tensor Y = f.b.output("Y", DType::F32, {f.M});
    ComputeOp &op = f.b.compute(Y, {f.i}, X(f.i));
    op.source = SourceSpan{{"kernel.cu", 12, 5}, {"kernel.cu", 14, 6}};
    const Status s = f.b.finish().validate();
    ASSERT_FALSE(s.ok());
    ASSERT_TRUE(s.error().location.has_value());
    EXPECT_EQ(s.error().location->toString(), "kernel.cu:12:5");
    EXPECT_EQ(s.error().diagnostics.at(0).toString().rfind("kernel.cu:12:5: error: ", 0), 0u);
}
