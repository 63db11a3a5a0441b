#include "gpubench/harness/host_memory.hpp"

#include <sys/mman.h>

#include <hwloc.h>

#include <cerrno>

#include "gpubench/core/errors.hpp"

namespace gpubench {

host_buffer::host_buffer(std::size_t bytes, std::optional<int> numa_node) : bytes_(bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    throw_system_error("mmap(" + std::to_string(bytes) + " bytes)", errno);
  }
  data_ = p;
  if (!numa_node) {
    return;
  }
  // Bind before the first touch: pages are placed when first written.
  hwloc_topology_t topology = nullptr;
  if (hwloc_topology_init(&topology) == 0 && hwloc_topology_load(topology) == 0) {
    hwloc_obj_t node =
        hwloc_get_numanode_obj_by_os_index(topology, static_cast<unsigned>(*numa_node));
    if (node != nullptr) {
      bound_ = hwloc_set_area_membind(topology, data_, bytes_, node->nodeset, HWLOC_MEMBIND_BIND,
                                      HWLOC_MEMBIND_BYNODESET) == 0;
    }
  }
  if (topology != nullptr) {
    hwloc_topology_destroy(topology);
  }
}

host_buffer::~host_buffer() {
  if (data_ != nullptr) {
    munmap(data_, bytes_);
  }
}

}  // namespace gpubench
