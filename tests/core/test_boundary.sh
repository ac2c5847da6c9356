#!/usr/bin/env bash
# The library boundary, from the outside: libtessera.so exports exactly the
# functions tessera.h declares with TSR_API (no tsr__ internals, nothing
# else); the BLAS shim exports only the BLAS entry points; `tessera
# --version` prints the project version. Usage: test_boundary.sh BUILD_DIR SOURCE_DIR
set -u
build=$1 src=$2
command -v nm >/dev/null || { echo "nm not found: skipped"; exit 77; }
failed=0
bad() { failed=1; echo "FAIL: $*"; }

lib="$build/libtessera.so"
[ -f "$lib" ] || { echo "FAIL: $lib not built"; exit 1; }
exported=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TtWwDdBbRrVvi]$/ {print $3}' | sort)
declared=$(sed -n 's/^TSR_API [^(]*[ *]\(tsr_[a-z0-9_]*\)(.*/\1/p' "$src/include/tessera.h" | sort)
[ -n "$declared" ] || bad "no TSR_API declarations found in tessera.h"
internal=$(printf '%s\n' "$exported" | grep -c '^tsr__')
[ "$internal" = 0 ] || bad "libtessera.so exports $internal tsr__ symbols, e.g. $(printf '%s\n' "$exported" | grep -m3 '^tsr__' | tr '\n' ' ')"
extra=$(comm -23 <(printf '%s\n' "$exported") <(printf '%s\n' "$declared"))
[ -z "$extra" ] || bad "libtessera.so exports what tessera.h does not declare: $(echo $extra)"
missing=$(comm -13 <(printf '%s\n' "$exported") <(printf '%s\n' "$declared"))
[ -z "$missing" ] || bad "tessera.h declares what libtessera.so does not export: $(echo $missing)"

shim="$build/libtessera_blas.so"
if [ -f "$shim" ]; then
  got=$(nm -D --defined-only "$shim" | awk '$2 ~ /^[TtWwDdBbRrVvi]$/ {print $3}' | sort | tr '\n' ' ')
  [ "$got" = "cblas_sgemm cblas_xerbla sgemm_ xerbla_ " ] || bad "libtessera_blas.so exports '$got'"
fi

want=$(sed -n 's/^project(tessera VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
got=$("$build/tessera" --version)
[ "$got" = "tessera $want" ] || bad "tessera --version printed '$got', want 'tessera $want'"

[ $failed = 0 ] && echo "ok: $(printf '%s\n' "$declared" | wc -l) exported functions, version $want"
exit $failed
