// Orders from a session's order functions: a priority queue (Volcano's
// util.PriorityQueue; Pop returns the element that goes first) and a sort.
// Both are heaps, which stay within their range whatever the order function
// answers: a plugin's order (a Python plugin's above all) that is not a
// strict weak order yields some order, never the memory corruption that
// std::sort's unguarded insertion gives. For a strict total order (every
// session order ends with creation time and UID) there is one result.
#pragma once

#include <algorithm>
#include <functional>
#include <vector>

namespace volcanic {

template <typename T>
class OrderedHeap {
 public:
  // `first(a, b)`: a goes before b. Must be a strict total order.
  explicit OrderedHeap(std::function<bool(const T&, const T&)> first)
      : after_([f = std::move(first)](const T& a, const T& b) { return f(b, a); }) {}

  void Push(T v) {
    items_.push_back(std::move(v));
    std::push_heap(items_.begin(), items_.end(), after_);
  }
  T Pop() {
    std::pop_heap(items_.begin(), items_.end(), after_);
    T v = std::move(items_.back());
    items_.pop_back();
    return v;
  }
  bool Empty() const { return items_.empty(); }
  size_t Size() const { return items_.size(); }

 private:
  std::function<bool(const T&, const T&)> after_;
  std::vector<T> items_;
};

// Sorts `items` so that an item `first` puts before another comes before it.
template <typename T, typename First>
void SortByOrder(std::vector<T>& items, First first) {
  std::make_heap(items.begin(), items.end(), first);
  std::sort_heap(items.begin(), items.end(), first);
}

}  // namespace volcanic
