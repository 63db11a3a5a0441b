// Work split over the machine's cores, for the few places that have much of it (a fleet's
// results file, calibrate's refits).
#pragma once

#include <cstddef>
#include <functional>

namespace gpubench {

// Calls body(begin, end) over [0, n) in ranges of `grain` items, on up to one thread per core
// this process may run on, or up to `max_threads` where that is not 0 (the calling thread among
// them); returns when every range is done. The first exception a call throws stops the ranges
// not yet started and is rethrown here. Where no thread can be started, the calling thread does
// it all.
void parallel_for(std::size_t n, std::size_t grain,
                  const std::function<void(std::size_t begin, std::size_t end)>& body,
                  std::size_t max_threads = 0);

}  // namespace gpubench
