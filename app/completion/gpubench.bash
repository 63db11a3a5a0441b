# bash completion for gpubench: its commands, each command's flags, and the names a flag takes
# (catalog entries, workloads, benchmark ids, suites, specs, --set keys). Every list is asked of
# the gpubench being completed (`gpubench list --names KIND`), so a new benchmark, catalog entry
# or flag needs no edit here. Installed as share/bash-completion/completions/gpubench; or
# `source` it from ~/.bashrc.

# The names of one kind, from the gpubench on the command line (a path such as ./build/gpubench,
# or the one on PATH).
_gpubench_names() {
  local exe=$1 kind=$2
  "$exe" list --names "$kind" 2>/dev/null
}

# Adds the words of $1 (newline-separated) that start with $2 to COMPREPLY, each with $3 before it.
_gpubench_add() {
  local words=$1 cur=$2 prefix=${3-} word
  while IFS= read -r word; do
    [[ -n $word && $prefix$word == "$cur"* ]] && COMPREPLY+=("$prefix$word")
  done <<<"$words"
}

_gpubench() {
  COMPREPLY=()
  local exe=${COMP_WORDS[0]} flag_prefix=
  # A literal "~/" as typed: the word is not expanded before completion.
  # shellcheck disable=SC2088
  [[ $exe == "~/"* ]] && exe=$HOME/${exe#"~/"}
  command -v "$exe" >/dev/null 2>&1 || exe=gpubench

  # bash splits words at ':' and '=' (COMP_WORDBREAKS): "catalog:dgx" arrives as three words.
  # Put the word under the cursor back together, and remember where it starts.
  local first=$COMP_CWORD cur=${COMP_WORDS[COMP_CWORD]}
  while ((first > 1)) &&
    [[ ${COMP_WORDS[first]} == [:=] || ${COMP_WORDS[first - 1]} == [:=] ]]; do
    ((first--))
    cur=${COMP_WORDS[first]}$cur
  done
  local prev=
  ((first > 1)) && prev=${COMP_WORDS[first - 1]}

  # The command: the first word after gpubench that is not a flag.
  local command='' i
  for ((i = 1; i < first; i++)); do
    if [[ ${COMP_WORDS[i]} != -* ]]; then
      command=${COMP_WORDS[i]}
      break
    fi
  done

  # --flag=value is the flag and the value.
  if [[ $cur == --*=* ]]; then
    prev=${cur%%=*}
    cur=${cur#*=}
    flag_prefix=$prev=
  fi

  if [[ -z $command ]]; then
    if [[ $cur == -* ]]; then
      _gpubench_add $'--help\n--version' "$cur"
    else
      _gpubench_add "$(_gpubench_names "$exe" commands)" "$cur"
    fi
  elif [[ $cur == -* && -z $flag_prefix ]]; then
    _gpubench_add "$(_gpubench_names "$exe" "flags:$command")" "$cur"
  else
    _gpubench_values "$exe" "$command" "$prev" "$cur"
  fi

  # bash puts each reply in place of the part of the word after the last ':' or '=': drop what
  # comes before it.
  local typed=$flag_prefix$cur
  if [[ $typed == *[:=]* ]]; then
    local before=${typed%"${typed##*[:=]}"} reply
    for i in "${!COMPREPLY[@]}"; do
      reply=$flag_prefix${COMPREPLY[i]}
      COMPREPLY[i]=${reply#"$before"}
    done
  fi
}

# What the value of a flag (or a command's positional argument) may be.
_gpubench_values() {
  local exe=$1 command=$2 prev=$3 cur=$4
  case $prev in
    --hardware | --results)
      _gpubench_add "$(_gpubench_names "$exe" catalog)" "$cur" catalog:
      _gpubench_files "$cur"
      ;;
    --workload)
      _gpubench_add "$(_gpubench_names "$exe" workloads)" "$cur"
      _gpubench_files "$cur"
      ;;
    --suite)
      _gpubench_add "$(_gpubench_names "$exe" suites)" "$cur"
      _gpubench_files "$cur"
      ;;
    --spec)
      _gpubench_add "$(_gpubench_names "$exe" specs)" "$cur"
      _gpubench_files "$cur"
      ;;
    --only | --skip)
      # A comma-separated list: complete the id after the last comma.
      local done_ids=
      [[ $cur == *,* ]] && done_ids=${cur%,*},
      _gpubench_add "$(_gpubench_names "$exe" benchmarks)" "$cur" "$done_ids"
      ;;
    --axis)
      # ID:AXIS=VALUES: the id, then the rest is typed.
      [[ $cur == *:* ]] && return
      _gpubench_add "$(_gpubench_names "$exe" benchmarks)" "$cur"
      _gpubench_suffix ':'
      ;;
    --precision)
      _gpubench_add "$(_gpubench_names "$exe" precisions)" "$cur"
      ;;
    --set)
      # KEY=VALUE: a catalog GPU for gpu.model, a number for the others. compare's
      # MACHINE:KEY=VALUE is typed.
      if [[ $cur == gpu.model=* ]]; then
        _gpubench_add "$(_gpubench_names "$exe" gpus)" "$cur" gpu.model=
      elif [[ $cur != *=* ]]; then
        _gpubench_add "$(_gpubench_names "$exe" settings)" "$cur"
        _gpubench_suffix '='
      fi
      ;;
    --tokens | --samples)
      # [WORKLOAD=]N: the workload, then the number is typed.
      [[ $cur == *=* ]] && return
      _gpubench_add "$(_gpubench_names "$exe" workloads)" "$cur"
      _gpubench_suffix '='
      ;;
    --gpus | --nodes | --batch | --duration | --timeout | --interval | --pid | --epochs | \
      --dataset-samples | --baseline-tolerance | --names) ;; # a number, or a word for scripts
    *)
      case $command in
        help) _gpubench_add "$(_gpubench_names "$exe" commands)" "$cur" ;;
        compare | watch)
          _gpubench_add "$(_gpubench_names "$exe" catalog)" "$cur" catalog:
          _gpubench_files "$cur"
          ;;
        *) _gpubench_files "$cur" ;;
      esac
      ;;
  esac
}

# Each reply ends in $1 and no space follows it: more is typed after "ID:" or "KEY=".
_gpubench_suffix() {
  local i
  for i in "${!COMPREPLY[@]}"; do COMPREPLY[i]=${COMPREPLY[i]}$1; done
  compopt -o nospace 2>/dev/null || true
}

# Files and folders that start with $1.
_gpubench_files() {
  local file
  while IFS= read -r file; do
    [[ -n $file ]] && COMPREPLY+=("$file")
  done < <(compgen -f -- "$1")
}

complete -F _gpubench gpubench
