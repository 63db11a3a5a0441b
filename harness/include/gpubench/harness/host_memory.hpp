// Host memory placed on a chosen NUMA node, for copies between the host and a GPU: the GPU's own
// node, so a PCIe figure is not a cross-socket figure.
#pragma once

#include <cstddef>
#include <optional>

namespace gpubench {

class host_buffer {
 public:
  // Page-aligned, not yet touched. With a node, pages are bound to it (hwloc); if binding is
  // refused the memory is still usable and bound() says so.
  host_buffer(std::size_t bytes, std::optional<int> numa_node);
  host_buffer(const host_buffer&) = delete;
  host_buffer& operator=(const host_buffer&) = delete;
  ~host_buffer();

  [[nodiscard]] void* data() const noexcept { return data_; }
  [[nodiscard]] std::size_t size() const noexcept { return bytes_; }
  [[nodiscard]] bool bound() const noexcept { return bound_; }

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
  bool bound_ = false;
};

}  // namespace gpubench
