// What the cases of one run share because it costs too much to make per case: NCCL communicators,
// made once per set of GPUs as nccl-tests makes them once per run. The run owns the store and
// empties it, newest first, when it ends (run_plan); a case drops an entry it found broken, and
// the next case that needs one makes it anew.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <typeinfo>
#include <utility>
#include <vector>

namespace gpubench {

class shared_resources {
 public:
  shared_resources() = default;
  shared_resources(const shared_resources&) = delete;
  shared_resources& operator=(const shared_resources&) = delete;
  ~shared_resources() { clear(); }

  // The item stored under `key`, or nullptr. Throws std::logic_error if it is of another type.
  template <class T>
  [[nodiscard]] T* find(const std::string& key) const {
    for (const auto& e : entries_) {
      if (e.key != key) continue;
      if (*e.type != typeid(T)) {
        throw std::logic_error("shared resource '" + key + "' is not of the type asked for");
      }
      return static_cast<T*>(e.item.get());
    }
    return nullptr;
  }

  // Stores `item` under `key` (which must be free) and returns it.
  template <class T>
  T& add(const std::string& key, std::unique_ptr<T> item) {
    if (find_entry(key) != entries_.end()) {
      throw std::logic_error("shared resource '" + key + "' stored twice");
    }
    T& out = *item;
    entries_.push_back({key, std::shared_ptr<void>(std::move(item)), &typeid(T)});
    return out;
  }

  // Destroys the item under `key`, if any.
  void remove(const std::string& key) {
    if (auto it = find_entry(key); it != entries_.end()) entries_.erase(it);
  }

  // Destroys every item, the newest first (later items may use earlier ones).
  void clear() {
    while (!entries_.empty()) entries_.pop_back();
  }

  [[nodiscard]] std::size_t size() const noexcept { return entries_.size(); }

 private:
  struct entry {
    std::string key;
    std::shared_ptr<void> item;  // type-erased; the deleter of the stored type runs
    const std::type_info* type;
  };
  [[nodiscard]] std::vector<entry>::iterator find_entry(const std::string& key) {
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->key == key) return it;
    }
    return entries_.end();
  }
  std::vector<entry> entries_;
};

}  // namespace gpubench
