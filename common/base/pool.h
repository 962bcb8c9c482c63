// What a worker lends its connections while they need it (hearts, pending
// writes, held input): made on first need and kept for reuse, so a pool
// grows to the peak in use and nothing is allocated per request after that.
#pragma once

#include <memory>
#include <vector>

namespace hello {

template <typename T>
class Pool {
 public:
  // A spare object, or a new one from `make()` (a std::unique_ptr<T>).
  template <typename Make>
  T* acquire(Make make) {
    if (spare_.empty()) {
      all_.push_back(make());
      return all_.back().get();
    }
    T* t = spare_.back();
    spare_.pop_back();
    return t;
  }
  void release(T* t) { spare_.push_back(t); }

 private:
  std::vector<std::unique_ptr<T>> all_;  // owns every object made
  std::vector<T*> spare_;                // those not lent out
};

}  // namespace hello
