// A sequence kept as the vectors it was built from, in order: appending a vector moves no
// element. A fleet's validation builds 1.3 million outcomes in parts on every core; joining the
// parts into one vector moved 400 MB into memory the kernel first had to clear, a fifth of the
// command's time.
#pragma once

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <type_traits>
#include <utility>
#include <vector>

namespace gpubench {

template <typename T>
class chunked_vector {
  template <bool Const>
  class basic_iterator {
    using owner = std::conditional_t<Const, const chunked_vector, chunked_vector>;

   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = std::conditional_t<Const, const T*, T*>;
    using reference = std::conditional_t<Const, const T&, T&>;

    basic_iterator() = default;
    basic_iterator(owner* of, std::size_t chunk, std::size_t item)
        : of_(of), chunk_(chunk), item_(item) {}
    // A mutable iterator converts to a const one.
    template <bool WasConst, typename = std::enable_if_t<Const && !WasConst>>
    basic_iterator(const basic_iterator<WasConst>& other)  // NOLINT(google-explicit-constructor)
        : of_(other.of_), chunk_(other.chunk_), item_(other.item_) {}

    [[nodiscard]] reference operator*() const { return of_->chunks_[chunk_][item_]; }
    [[nodiscard]] pointer operator->() const { return &of_->chunks_[chunk_][item_]; }
    basic_iterator& operator++() {
      if (++item_ == of_->chunks_[chunk_].size()) {
        ++chunk_;  // chunks are never empty
        item_ = 0;
      }
      return *this;
    }
    basic_iterator operator++(int) {
      basic_iterator was = *this;
      ++*this;
      return was;
    }
    [[nodiscard]] friend bool operator==(const basic_iterator& a, const basic_iterator& b) {
      return a.chunk_ == b.chunk_ && a.item_ == b.item_;
    }
    [[nodiscard]] friend bool operator!=(const basic_iterator& a, const basic_iterator& b) {
      return !(a == b);
    }

   private:
    template <bool>
    friend class basic_iterator;
    owner* of_ = nullptr;
    std::size_t chunk_ = 0;
    std::size_t item_ = 0;
  };

 public:
  using value_type = T;
  using size_type = std::size_t;
  using iterator = basic_iterator<false>;
  using const_iterator = basic_iterator<true>;

  // From the parts themselves, so that a moved-from container is simply empty.
  [[nodiscard]] std::size_t size() const {
    return chunks_.empty() ? 0 : starts_.back() + chunks_.back().size();
  }
  [[nodiscard]] bool empty() const { return chunks_.empty(); }

  // Takes the vector's elements as they lie.
  void append(std::vector<T>&& chunk) {
    if (chunk.empty()) return;
    starts_.push_back(size());
    chunks_.push_back(std::move(chunk));
  }
  template <typename... Args>
  T& emplace_back(Args&&... args) {
    if (!chunks_.empty()) return chunks_.back().emplace_back(std::forward<Args>(args)...);
    std::vector<T> first;
    first.emplace_back(std::forward<Args>(args)...);  // made before it is counted: no empty part
    append(std::move(first));
    return chunks_.back().back();
  }
  void push_back(const T& item) { emplace_back(item); }
  void push_back(T&& item) { emplace_back(std::move(item)); }

  [[nodiscard]] T& back() { return chunks_.back().back(); }
  [[nodiscard]] const T& back() const { return chunks_.back().back(); }
  // The element at position i of the whole sequence: a binary search over the chunks.
  [[nodiscard]] T& operator[](std::size_t i) { return locate(*this, i); }
  [[nodiscard]] const T& operator[](std::size_t i) const { return locate(*this, i); }

  // The chunks, for work split over threads a chunk at a time: their elements may change, not
  // their sizes (the positions are counted from them).
  [[nodiscard]] std::vector<std::vector<T>>& chunks() { return chunks_; }
  [[nodiscard]] const std::vector<std::vector<T>>& chunks() const { return chunks_; }

  [[nodiscard]] iterator begin() { return {this, 0, 0}; }
  [[nodiscard]] iterator end() { return {this, chunks_.size(), 0}; }
  [[nodiscard]] const_iterator begin() const { return {this, 0, 0}; }
  [[nodiscard]] const_iterator end() const { return {this, chunks_.size(), 0}; }

 private:
  template <typename Self>
  static auto& locate(Self& self, std::size_t i) {
    const auto after = std::upper_bound(self.starts_.begin(), self.starts_.end(), i);
    const auto chunk = static_cast<std::size_t>(after - self.starts_.begin()) - 1;
    return self.chunks_[chunk][i - self.starts_[chunk]];
  }

  std::vector<std::vector<T>> chunks_;  // none empty
  std::vector<std::size_t> starts_;     // the position of each chunk's first element
};

}  // namespace gpubench
