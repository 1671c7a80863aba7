# bash completion for ksmscan(1): options, and the names that -a, -c, -f, -o,
# -r and --by take (comma lists too), read from the ksmscan being completed so
# that they never differ from its tables; files otherwise.
_ksmscan_names()
{
	# $1: the option; prints the names it takes.
	case $1 in
	-a|--algo) "${COMP_WORDS[0]}" -a help --csv 2>/dev/null |
		sed -n '2,$s/,.*//p'; echo all auto help ;;
	-c|--compress) echo lz4 lzo lzo-rle zstd all ;;
	-f|--format) "${COMP_WORDS[0]}" --help 2>/dev/null |
		sed -n 's/^  -f, --format=FMT *//p' | tr -d ',' ;;
	-o|--output) "${COMP_WORDS[0]}" --help 2>/dev/null |
		sed -n 's/^  -o, --output=FMT *//p' | tr -d ',' ;;
	--by) echo unit cgroup container vm process ;;
	-r|--report) "${COMP_WORDS[0]}" --help 2>/dev/null |
		sed -n '/^  -r, --report=LIST/,/(default/{s/^  -r, --report=LIST//;/(default/d;p}' |
		tr -d ',' ;;
	--smart-scan) echo 0 1 ;;
	--thp) echo never always ;;
	--policy) echo fixed advisor ksmtuned kubevirt ;;
	esac
}

_ksmscan()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
	local opt=$prev names head

	# --opt=value is completed like --opt value.
	if [[ $cur == --*=* ]]; then
		opt=${cur%%=*}
		cur=${cur#*=}
	fi
	case $opt in
	-a|--algo|-c|--compress|-f|--format|-o|--output|-r|--report|--smart-scan|\
	--by|--policy|--thp)
		names=$(_ksmscan_names "$opt")
		# In a comma list, complete the last name.
		head=
		[[ $cur == *,* ]] && head=${cur%,*},
		COMPREPLY=($(compgen -P "$head" -W "$names" -- "${cur##*,}"))
		return ;;
	--known)
		# A comma list of files: complete the last one.
		head=
		[[ $cur == *,* ]] && head=${cur%,*},
		COMPREPLY=($(compgen -P "$head" -f -- "${cur##*,}"))
		return ;;
	--check|--record)
		COMPREPLY=($(compgen -f -- "$cur"))
		return ;;
	-p|--pid)
		COMPREPLY=($(compgen -W "$(cd /proc && echo [0-9]*)" -- "$cur"))
		return ;;
	-j|--threads|-m|--max-page-sharing|--top|--range|--label|--interval|\
	--count|--pages-to-scan|--sleep-ms|--scans|--sketch-size|--host|--enable|--hz|\
	--page-cost|--revisit-cost|--merge-cost|--wake-cost|--write-rate|--sample|--advisor-target-scan-time|--advisor-max-cpu|\
	--advisor-min-pages-to-scan|--advisor-max-pages-to-scan|--host-memory|\
	--host-used|--target|--max-cpu|--tolerance|--tolerance-pages)
		return ;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$("${COMP_WORDS[0]}" --help 2>/dev/null |
			grep -o -- '--\?[a-zA-Z][-a-zA-Z]*' | sort -u)" -- "$cur"))
		return
	fi
	COMPREPLY=($(compgen -f -- "$cur"))
}

complete -F _ksmscan -o filenames ksmscan
