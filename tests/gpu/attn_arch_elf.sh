#!/usr/bin/env bash
# attn_arch_elf.sh LIB ARCHS SM90 - the attention objects of libkptkernels
# (LIB) hold SASS for every CUDA architecture of the build (ARCHS: comma
# separated, CMAKE_CUDA_ARCHITECTURES), so an L4 / A10G / RTX 4090 build
# (80,86,89,90) has the mma.sync kernels for each; with 90 listed and SM90
# on, attention_fwd_sm90 and attention_bwd_sm90 are sm_90a and nothing else
# (an sm_90 image of them would be an empty stub). No GPU needed; seconds (inspects the built
# library). 77 when cuobjdump or the library is missing.
set -u
lib=$1 archs=$2 sm90=${3:-ON}
objdump=${CUOBJDUMP:-cuobjdump}
fail() { echo "FAIL: $*"; exit 1; }
command -v "$objdump" >/dev/null || { echo "no cuobjdump"; exit 77; }
[ -f "$lib" ] || { echo "no $lib (build kptkernels first)"; exit 77; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && ar x "$lib") || fail "ar x $lib"
elfs() { "$objdump" --list-elf "$tmp/$1" 2>/dev/null | grep -o 'sm_[0-9]*[af]\?' | sort -u | tr '\n' ' '; }
for obj in attention_fwd.cu.o attention_bwd.cu.o attention_decode.cu.o; do
	[ -f "$tmp/$obj" ] || fail "$obj is not in $lib"
	have=$(elfs "$obj")
	echo "$obj: $have"
	IFS=, read -ra list <<<"$archs"
	for a in "${list[@]}"; do
		a=${a%%-*}                      # 90-real -> 90
		case " $have " in *" sm_$a "*) ;; *) fail "$obj has no sm_$a code (has: $have)";; esac
	done
done
case ",$archs," in
*,90,* | *,90-real,* | *,90-virtual,* | *,90a,* | *,90a-real,*) has90=1 ;;
*) has90=0 ;;
esac
for kind in fwd bwd; do
	sm90obj=$(cd "$tmp" && ls attention_${kind}_sm90*.o 2>/dev/null | head -1)
	if [ "$has90" = 1 ] && [ "$sm90" != OFF ]; then
		[ -n "$sm90obj" ] || fail "90 is an architecture but attention_${kind}_sm90 is not in $lib"
		have=$(elfs "$sm90obj")
		echo "$sm90obj: $have"
		[ "$have" = "sm_90a " ] || fail "attention_${kind}_sm90 must be sm_90a alone, has: $have"
	else
		[ -z "$sm90obj" ] || fail "attention_${kind}_sm90 is built without architecture 90"
	fi
done
echo ok
