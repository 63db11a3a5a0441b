// A build without MPI must not run as N unconnected copies under mpirun.
#include <catch2/catch.hpp>

#include "../cli/process.hpp"

using namespace gpubench::testing;

TEST_CASE("a build without MPI started by mpirun says so and stops", "[mpi]") {
  const auto r = run_program({MPIEXEC, "--allow-run-as-root", "--oversubscribe", "-np", "2",
                              GPUBENCH_EXE, "run", "--suite", "quick"});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err,
             Catch::Contains("gpubench was built without MPI but was started by an MPI launcher"));
  CHECK_THAT(r.err, Catch::Contains("OMPI_COMM_WORLD_SIZE=2"));
}
