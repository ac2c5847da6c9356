# Sourced by the MPI tests (tests/tune/test_tune_mpi.sh,
# tests/bench/test_bench_mpi.sh) after BUILD is set: skips (77) without
# tessera-mpi, mpirun or python3; sets TM and MPIRUN. OpenMPI refuses root
# without the two variables (CI runs as root); two ranks on a small machine
# need oversubscription; no binding, so a rank's threads are not pinned to
# one core.
TM=$BUILD/tessera-mpi
[ -x "$TM" ] || { echo "skipped: this build has no tessera-mpi (no C MPI found at configure time, or TSR_MPI=OFF as in sanitizer builds)"; exit 77; }
command -v mpirun >/dev/null || { echo "skipped: no mpirun"; exit 77; }
command -v python3 >/dev/null || { echo "skipped: no python3"; exit 77; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPIRUN=(mpirun -np 2 --oversubscribe --bind-to none)
