#include "base/cpu_quota.h"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string_view>
#include <vector>

namespace hello {

namespace {

std::string read_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

std::vector<std::string> split(const std::string& text, char by) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, by);) parts.push_back(part);
  return parts;
}

bool has(const std::string& list, std::string_view name) {
  for (const std::string& s : split(list, ','))
    if (s == name) return true;
  return false;
}

// A cgroup hierarchy: where it is mounted, the part of it the mount shows,
// and the process's cgroup in it.
struct Hierarchy {
  std::string mount;
  std::string mount_root;
  std::string path;
  bool found() const { return !mount.empty() && !path.empty(); }
  // The process's cgroup directory, then each one above it to the mount's.
  std::vector<std::string> dirs(const std::string& root) const {
    std::string rel = path;
    if (mount_root != "/" && rel.rfind(mount_root, 0) == 0) rel = rel.substr(mount_root.size());
    std::vector<std::string> out;
    for (;;) {
      out.push_back(root + mount + rel);
      if (rel.empty() || rel == "/") break;
      size_t slash = rel.rfind('/');
      rel = slash == 0 ? "/" : rel.substr(0, slash);
    }
    return out;
  }
};

struct Best {
  double cpus = 0;  // 0: none yet
  std::string why;
  void offer(double quota, double period, const std::string& what) {
    if (quota <= 0 || period <= 0) return;
    double c = quota / period;
    if (cpus == 0 || c < cpus) {
      cpus = c;
      why = what;
    }
  }
};

}  // namespace

CpuQuota cgroup_cpu_quota(const std::string& root) {
  Hierarchy v1, v2;
  {
    std::ifstream in(root + "/proc/self/cgroup");
    for (std::string line; std::getline(in, line);) {
      size_t a = line.find(':');
      size_t b = a == std::string::npos ? a : line.find(':', a + 1);
      if (b == std::string::npos) continue;
      std::string id = line.substr(0, a), controllers = line.substr(a + 1, b - a - 1);
      if (id == "0" && controllers.empty())
        v2.path = line.substr(b + 1);
      else if (has(controllers, "cpu"))
        v1.path = line.substr(b + 1);
    }
  }
  {
    // "ID PARENT MAJ:MIN ROOT MOUNT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER"
    std::ifstream in(root + "/proc/self/mountinfo");
    for (std::string line; std::getline(in, line);) {
      std::vector<std::string> f = split(line, ' ');
      size_t dash = 0;
      while (dash < f.size() && f[dash] != "-") ++dash;
      if (f.size() < 5 || dash + 3 >= f.size()) continue;
      const std::string& type = f[dash + 1];
      if (type == "cgroup2" && v2.mount.empty()) {
        v2.mount = f[4];
        v2.mount_root = f[3];
      } else if (type == "cgroup" && has(f[dash + 3], "cpu") && v1.mount.empty()) {
        v1.mount = f[4];
        v1.mount_root = f[3];
      }
    }
  }
  Best best;
  if (v2.found()) {
    for (const std::string& dir : v2.dirs(root)) {
      std::string max = read_line(dir + "/cpu.max");
      std::vector<std::string> q = split(max, ' ');
      if (q.size() == 2 && q[0] != "max")
        best.offer(std::atof(q[0].c_str()), std::atof(q[1].c_str()),
                   fmt::format("cgroup v2 cpu.max \"{}\"", max));
    }
  }
  if (v1.found()) {
    for (const std::string& dir : v1.dirs(root)) {
      std::string quota = read_line(dir + "/cpu.cfs_quota_us");
      std::string period = read_line(dir + "/cpu.cfs_period_us");
      if (!quota.empty() && !period.empty())
        best.offer(
            std::atof(quota.c_str()), std::atof(period.c_str()),
            fmt::format("cgroup v1 cpu.cfs_quota_us {} of cpu.cfs_period_us {}", quota, period));
    }
  }
  CpuQuota out;
  if (best.cpus > 0) {
    out.cpus = std::max(1, static_cast<int>(std::floor(best.cpus)));
    out.why = best.why;
  }
  return out;
}

}  // namespace hello
