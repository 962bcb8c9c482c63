// --fast's CPU quota (base/cpu_quota.h) from fake cgroup trees: cgroup v2
// (cpu.max, a quota on a parent cgroup counting too), cgroup v1 (the cpu
// controller's cfs files, a hierarchy whose mount shows only the
// container's part, as in a container), hybrid (the smaller wins), no
// quota (max, -1) and no cgroup at all. This machine's own tree is hybrid,
// v1 with a v2 hierarchy beside it: the fakes are shaped like it.
#include "base/cpu_quota.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace hello {
namespace {

namespace fs = std::filesystem;

class FakeCgroups : public ::testing::Test {
 protected:
  FakeCgroups()
      : root_(fs::temp_directory_path() /
              ("cgroups-" + std::to_string(getpid()) + "-" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name())) {
    fs::create_directories(root_ / "proc/self");
  }
  ~FakeCgroups() override { fs::remove_all(root_); }
  void write(const std::string& path, const std::string& text) {
    fs::path p = root_ / path;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  CpuQuota quota() { return cgroup_cpu_quota(root_.string()); }

  fs::path root_;
};

constexpr const char* kMountsV2 =
    "30 25 0:26 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate\n";
constexpr const char* kMountsHybrid =
    "25 24 0:22 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n"
    "26 24 0:23 / /sys/fs/cgroup/cpu rw,nosuid - cgroup cgroup rw,cpu\n"
    "27 24 0:24 / /sys/fs/cgroup/cpuacct rw - cgroup cgroup rw,cpuacct\n";

TEST_F(FakeCgroups, V2CpuMaxGivesTheWholeCpus) {
  write("proc/self/cgroup", "0::/kubepods/pod1/c1\n");
  write("proc/self/mountinfo", kMountsV2);
  write("sys/fs/cgroup/kubepods/pod1/c1/cpu.max", "250000 100000\n");
  CpuQuota q = quota();
  EXPECT_EQ(q.cpus, 2) << "2.5 CPUs: 2 workers, none throttled";
  EXPECT_EQ(q.why, "cgroup v2 cpu.max \"250000 100000\"");
}

TEST_F(FakeCgroups, V2AParentsQuotaCountsAndTheSmallestWins) {
  write("proc/self/cgroup", "0::/kubepods/pod1/c1\n");
  write("proc/self/mountinfo", kMountsV2);
  write("sys/fs/cgroup/kubepods/pod1/c1/cpu.max", "max 100000\n");
  write("sys/fs/cgroup/kubepods/pod1/cpu.max", "100000 100000\n");
  write("sys/fs/cgroup/kubepods/cpu.max", "400000 100000\n");
  EXPECT_EQ(quota().cpus, 1);
}

TEST_F(FakeCgroups, V1CfsQuotaInAContainersOwnMount) {
  // Inside a container the mount shows the container's cgroup as its root.
  write("proc/self/cgroup", "2:cpuacct:/docker/abc\n1:cpu:/docker/abc\n0::/\n");
  write("proc/self/mountinfo",
        "26 24 0:23 /docker/abc /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n");
  write("sys/fs/cgroup/cpu/cpu.cfs_quota_us", "150000\n");
  write("sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000\n");
  CpuQuota q = quota();
  EXPECT_EQ(q.cpus, 1);
  EXPECT_EQ(q.why, "cgroup v1 cpu.cfs_quota_us 150000 of cpu.cfs_period_us 100000");
}

TEST_F(FakeCgroups, HybridTakesTheSmallerOfV1AndV2) {
  write("proc/self/cgroup", "2:cpuacct:/\n1:cpu:/job\n0::/job\n");
  write("proc/self/mountinfo", kMountsHybrid);
  write("sys/fs/cgroup/cpu/job/cpu.cfs_quota_us", "300000\n");
  write("sys/fs/cgroup/cpu/job/cpu.cfs_period_us", "100000\n");
  write("sys/fs/cgroup/unified/job/cpu.max", "200000 100000\n");
  EXPECT_EQ(quota().cpus, 2);
}

TEST_F(FakeCgroups, NoQuotaIsNone) {
  write("proc/self/cgroup", "1:cpu:/\n0::/\n");
  write("proc/self/mountinfo", kMountsHybrid);
  write("sys/fs/cgroup/cpu/cpu.cfs_quota_us", "-1\n");
  write("sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000\n");
  write("sys/fs/cgroup/unified/cpu.max", "max 100000\n");
  EXPECT_EQ(quota().cpus, 0);
  EXPECT_EQ(quota().why, "");
}

TEST_F(FakeCgroups, NoCgroupFilesAtAllIsNone) {
  EXPECT_EQ(quota().cpus, 0);
}

TEST_F(FakeCgroups, ASmallQuotaIsStillOneWorker) {
  write("proc/self/cgroup", "0::/\n");
  write("proc/self/mountinfo", kMountsV2);
  write("sys/fs/cgroup/cpu.max", "20000 100000\n");
  EXPECT_EQ(quota().cpus, 1);
}

}  // namespace
}  // namespace hello
