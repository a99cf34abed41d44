// A priority queue whose order is a session order function (Volcano's
// util.PriorityQueue): Pop returns the element that goes first.
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

}  // namespace volcanic
