// The CPUs the CFS quotas of this process's cgroups allow, read by the tests
// themselves (not through common/base/cpu_quota.cc), so that a test of
// --fast takes neither the server's word nor its code for what to expect.
// A server the tests start is in the test's own cgroups.
#pragma once

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

namespace hello::test {

inline std::string first_line_of(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

inline bool in_list(const std::string& list, const std::string& name) {
  std::istringstream in(list);
  for (std::string item; std::getline(in, item, ',');)
    if (item == name) return true;
  return false;
}

// floor(quota / period) of the smallest quota set on the process's cgroup or
// any above it (cgroup v2's cpu.max, v1's cpu.cfs_quota_us and
// cpu.cfs_period_us), at least 1; 0 when none sets one.
inline int cgroup_quota_cpus() {
  std::map<std::string, std::string> own;  // filesystem type -> the process's cgroup in it
  std::ifstream cgroups("/proc/self/cgroup");
  for (std::string line; std::getline(cgroups, line);) {  // ID:CONTROLLERS:PATH
    size_t a = line.find(':');
    size_t b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    std::string controllers = line.substr(a + 1, b - a - 1);
    if (line.substr(0, a) == "0" && controllers.empty()) own["cgroup2"] = line.substr(b + 1);
    if (in_list(controllers, "cpu")) own["cgroup"] = line.substr(b + 1);
  }
  double smallest = 0;
  std::ifstream mounts("/proc/self/mountinfo");
  for (std::string line; std::getline(mounts, line);) {
    // ID PARENT MAJ:MIN ROOT MOUNT OPTIONS [OPTIONAL...] - TYPE SOURCE SUPER_OPTIONS
    std::istringstream f(line);
    std::string id, parent, device, root, mount, word, type, source, options;
    f >> id >> parent >> device >> root >> mount;
    while (f >> word && word != "-") {
    }
    f >> type >> source >> options;
    if (!own.count(type) || (type == "cgroup" && !in_list(options, "cpu"))) continue;
    std::string rel = own[type];
    own.erase(type);  // the first mount of each hierarchy
    if (root != "/" && rel.rfind(root, 0) == 0) rel = rel.substr(root.size());
    for (;;) {
      std::string dir = mount + rel;
      double quota = 0, period = 0;
      if (type == "cgroup2") {
        std::istringstream max(first_line_of(dir + "/cpu.max"));
        std::string q;
        max >> q >> period;
        if (q != "max" && !q.empty()) quota = std::stod(q);
      } else {
        std::string q = first_line_of(dir + "/cpu.cfs_quota_us");
        std::string p = first_line_of(dir + "/cpu.cfs_period_us");
        if (!q.empty() && !p.empty()) quota = std::stod(q), period = std::stod(p);
      }
      if (quota > 0 && period > 0 && (smallest == 0 || quota / period < smallest))
        smallest = quota / period;
      size_t slash = rel.rfind('/');
      if (rel == "/" || slash == std::string::npos) break;
      rel = rel.substr(0, slash);
    }
  }
  return smallest == 0 ? 0 : std::max(1, static_cast<int>(smallest));
}

}  // namespace hello::test
