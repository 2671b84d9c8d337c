// check_plan PLAN.json [ARCH]: reads a plan file back as `stitchcuda run` does (parsePlanFile), then
// builds its run request without a GPU (NVRTC compile, kernel names, the CPU reference's lift) and
// validates the job and the reference. Prints "plan ok: ..." and exits 0, or the error and 1.
#include "core/runner/PlanFile.h"

#include <fstream>
#include <iostream>
#include <sstream>

using namespace stitch;

int main(int argc, char **argv)
{
    if (argc < 2) {
        std::cerr << "usage: check_plan PLAN.json [ARCH]\n";
        return 2;
    }
    std::ifstream in(argv[1], std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    auto plan = runner::parsePlanFile(text.str(), argv[1]);
    if (!plan) {
        std::cerr << plan.error().toString() << "\n";
        return 1;
    }
    auto request = runner::buildRunRequest(*plan, argc > 2 ? argv[2] : "sm_90");
    if (!request) {
        std::cerr << request.error().toString() << "\n";
        return 1;
    }
    Status st = runner::validateJob(request->job);
    if (st && request->cpuReference)
        st = runner::validateCpuReference(request->job.plan, *request->cpuReference);
    if (!st) {
        std::cerr << st.error().toString() << "\n";
        return 1;
    }
    std::cout << "plan ok: " << plan->plan.buffers.size() << " buffers, " << plan->plan.launches.size() << " launches ("
              << request->job.plan.launches.front().kernel << "), reference "
              << (request->cpuReference ? "cpu" : "none") << "\n";
    return 0;
}
