#!/usr/bin/env bash
# Installs gpuscale's build dependencies from Debian's package registry (bookworm), only those
# that are missing. Uses sudo when not run as root. With --sanitize, also the compiler of the
# sanitizer and fuzzing build (tools/sanitize.sh): Clang 19 and its libFuzzer and sanitizer
# runtimes (Clang 14, bookworm's default, cannot capture structured bindings in lambdas). With
# --browser, also chromium, which the tests of `gpuscale serve`'s page drive headless.
set -euo pipefail

packages=(
  build-essential cmake pkg-config
  libsimgrid-dev          # discrete-event engine (3.32)
  libboost-graph-dev      # topologies and routes
  libyaml-cpp-dev libfmt-dev libspdlog-dev libcli11-dev nlohmann-json3-dev
  libprotobuf-dev protobuf-compiler  # Chakra execution traces (workloads/chakra/et_def.proto)
  libcpp-httplib-dev      # `gpuscale serve` (tools/serve/)
  libgtest-dev libgmock-dev libbenchmark-dev
  libjpeg62-turbo-dev     # libjpeg-turbo for tools/bench/bench_decode (skipped without it)
)
for flag in "$@"; do
  case "$flag" in
    --sanitize) packages+=(clang-19 libclang-rt-19-dev) ;;
    --browser) packages+=(chromium) ;;
    *) echo "usage: tools/install-deps.sh [--sanitize] [--browser]" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# A fresh machine may have empty package lists; refresh them only when an install needs it.
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}" ||
  { $sudo apt-get update -q && $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"; }
