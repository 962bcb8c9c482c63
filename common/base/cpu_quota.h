// The CPUs a cgroup's CFS quota lets this process use (docs/containers.md):
// a container limited to 2 CPUs by a quota still sees every CPU of its node
// in its affinity mask, so --fast reads the quota too, as the JVM and Go's
// automaxprocs do. cgroup v2's cpu.max ("QUOTA PERIOD", or "max PERIOD")
// and v1's cpu.cfs_quota_us and cpu.cfs_period_us (-1: none), of the
// process's own cgroup and every one above it (the smallest wins), found
// through /proc/self/cgroup and /proc/self/mountinfo.
#pragma once

#include <string>

namespace hello {

struct CpuQuota {
  int cpus = 0;     // floor(quota / period), at least 1; 0: no quota
  std::string why;  // which file said so, and its value, for the listening line
};

// `root` prefixes every path read (the tests' fake trees); "" for the real one.
CpuQuota cgroup_cpu_quota(const std::string& root = "");

}  // namespace hello
