#include "base/recycled.h"

#include <malloc.h>

#include <cstdint>
#include <cstdlib>

namespace hello {

namespace {

// A block kept for reuse is still a block of malloc's: it is keyed by
// malloc_usable_size(), so it needs no header and realloc() takes it as
// it is. Small blocks (up to 512 usable bytes) have a list per 16 bytes;
// larger ones, such as record buffers, a list per exact usable size, for
// the first few sizes seen.
constexpr size_t kSmallMax = 512;
constexpr size_t kSmallLists = kSmallMax / 16 + 1;
constexpr size_t kLargeLists = 8;
// Spares kept per list and thread: enough for the connections of one read
// of a busy worker; a burst beyond goes back to malloc.
constexpr uint32_t kMaxSmallSpares = 256;
constexpr uint32_t kMaxLargeSpares = 32;

struct Spare {
  Spare* next;
};

struct List {
  size_t usable = 0;  // large lists: the size they keep (0: unused yet)
  Spare* head = nullptr;
  uint32_t count = 0;
};

// glibc's usable size of malloc(n) (malloc.c's request2size less the size
// field): what malloc_usable_size() says of such a block, usually.
size_t usable_of(size_t n) {
  size_t chunk = (n + sizeof(size_t) + 15) & ~size_t{15};
  return (chunk < 32 ? 32 : chunk) - sizeof(size_t);
}

// One thread's lists; what they hold is freed when the thread ends.
struct Lists {
  List small[kSmallLists];
  List large[kLargeLists];
  ~Lists() {
    for (List& l : small) empty(l);
    for (List& l : large) empty(l);
  }
  static void empty(List& l) {
    while (Spare* s = l.head) {
      l.head = s->next;
      free(s);
    }
  }
  // The list of blocks of `usable` bytes; null if there is none and
  // `make` is false or no large list is left.
  List* of(size_t usable, bool make) {
    if (usable <= kSmallMax) return &small[usable / 16];
    for (List& l : large) {
      if (l.usable == usable) return &l;
      if (l.usable == 0 && make) {
        l.usable = usable;
        return &l;
      }
    }
    return nullptr;
  }
};
thread_local Lists lists;

}  // namespace

void* recycled_malloc(size_t n) {
  List* l = lists.of(usable_of(n), false);
  if (l != nullptr && l->head != nullptr) {
    Spare* s = l->head;
    l->head = s->next;
    --l->count;
    return s;
  }
  return malloc(n);
}

void recycled_free(void* p) {
  if (p == nullptr) return;
  size_t usable = malloc_usable_size(p);
  List* l = lists.of(usable, true);
  uint32_t limit = usable <= kSmallMax ? kMaxSmallSpares : kMaxLargeSpares;
  if (l == nullptr || l->count >= limit || usable > 256 * 1024) {
    free(p);
    return;
  }
  auto* s = static_cast<Spare*>(p);
  s->next = l->head;
  l->head = s;
  ++l->count;
}

void* recycled_realloc(void* p, size_t n) {
  return realloc(p, n);
}

}  // namespace hello
