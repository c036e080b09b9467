#!/usr/bin/env bash
# Gradescope's setup script for the fencing-lab autograder: run once, as
# root, when Gradescope builds the autograder's image, with the zip
# unpacked in /autograder/source (AUTOGRADER_ROOT replaces /autograder, as
# CI's emulation of the layout does). It installs what the tracks graded
# (the file `tracks`, written by make-zip) need: from the system's
# packages a C compiler (SQLite is compiled from source), bubblewrap (the
# sandbox), sqlite3 (the external client of L3.5 and L5.7), PostgreSQL or
# etcd and protoc for their tracks; Rust from rustup where there is no
# cargo; then builds the lab and the grader once, on the stubs, so that a
# submission compiles only its own crate.
set -euo pipefail
root=${AUTOGRADER_ROOT:-/autograder}
source_dir=$root/source
flags=$(cat "$source_dir/tracks" 2> /dev/null || true)

packages=(build-essential ca-certificates curl bubblewrap sqlite3)
[[ $flags != *--postgres* ]] || packages+=(postgresql)
[[ $flags != *--etcd* ]] || packages+=(etcd-server protobuf-compiler libprotobuf-dev)
missing=()
for package in "${packages[@]}"; do
  dpkg -s "$package" > /dev/null 2>&1 || missing+=("$package")
done
if [[ ${#missing[@]} -gt 0 ]]; then
  apt-get update
  # A server package's own service may fail to start in a container: the
  # lab starts servers of its own, only the programs matter.
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" \
    || echo "apt-get reported an error; the grader says what is missing"
fi

# Rust 1.85 or later, from rustup where there is no cargo.
[[ ! -f $HOME/.cargo/env ]] || . "$HOME/.cargo/env"
if ! command -v cargo > /dev/null 2>&1; then
  curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs \
    | sh -s -- -y --profile minimal --default-toolchain stable
  . "$HOME/.cargo/env"
fi
cargo --version

# Started by root, the sandbox runs a submission as this account (where
# bubblewrap can run in the container; where not, the grader says so).
if [[ $(id -u) == 0 ]] && ! id fencing-grader > /dev/null 2>&1; then
  useradd --system --no-create-home --shell /usr/sbin/nologin fencing-grader
fi

# The first build, on the stubs: the dependencies, the lab and the grader.
# The stubs fail every claim; only the build matters here.
cd "$source_dir/lab"
# shellcheck disable=SC2086 # the track flags, one word each
cargo grade $flags > /dev/null || [[ $? == 1 ]]
echo "the lab and the grader are built"
