#!/usr/bin/env bash
# A relocatable install (README, "One build, many servers"): cmake --install into one folder, move
# the folder, and the moved binary still finds its configs there, not in the source tree: a
# workload that exists only in the installed copy must be found.
# usage: check_install.sh BUILD_DIR WORK_DIR
set -euo pipefail
build=$1
work=$2
rm -rf "$work"
mkdir -p "$work"
cmake --install "$build" --prefix "$work/first" >/dev/null
mv "$work/first" "$work/moved"
configs="$work/moved/share/gpubench/configs"
test -x "$work/moved/bin/gpubench"
sed 's/"name": "resnet50"/"name": "installed-only"/' "$configs/workloads/resnet50.json" \
  >"$configs/workloads/installed-only.json"
out=$(env -u GPUBENCH_CONFIG_DIR "$work/moved/bin/gpubench" size --workload installed-only \
  --hardware catalog:dgx-h100)
echo "$out" | head -2
case "$out" in
  "installed-only on catalog:dgx-h100"*) echo "ok   the moved install reads its own configs" ;;
  *) echo "FAIL the moved install did not find its own configs"; exit 1 ;;
esac

# Shell completion where bash-completion and zsh look under the prefix; the installed bash
# completion asks the installed binary, so the installed-only workload is offered.
bash_completion="$work/moved/share/bash-completion/completions/gpubench"
zsh_completion="$work/moved/share/zsh/site-functions/_gpubench"
test -f "$bash_completion" || { echo "FAIL no $bash_completion"; exit 1; }
test -f "$zsh_completion" || { echo "FAIL no $zsh_completion"; exit 1; }
# shellcheck disable=SC2016  # the script expands its own arguments
offered=$(env -u GPUBENCH_CONFIG_DIR bash --norc -c '
  source "$1"
  COMP_WORDS=("$2" size --workload installed-o)
  COMP_CWORD=3
  _gpubench
  printf "%s\n" "${COMPREPLY[@]}"' _ "$bash_completion" "$work/moved/bin/gpubench")
case "$offered" in
  installed-only) echo "ok   bash completion installed, offering the installed configs' names" ;;
  *) echo "FAIL bash completion offered '$offered' for --workload installed-o"; exit 1 ;;
esac
if command -v zsh >/dev/null; then
  zsh -n "$zsh_completion" || { echo "FAIL $zsh_completion does not parse"; exit 1; }
  echo "ok   zsh completion installed and parses"
fi
