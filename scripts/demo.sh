#!/usr/bin/env bash
# `make demo`: runs the diffusion example (1,000 e-pucks, 60 simulated seconds) and says where
# its log is and how to look at it.
set -euo pipefail
build="${1:-build}"
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/$build/demo"
mkdir -p "$out"
echo "fleetsim demo: 1,000 e-pucks diffusing in a 40 m x 40 m arena divided into rooms"
echo "  experiment: examples/diffusion/diffusion.xml"
"$root/$build/fleetsim" run "$root/examples/diffusion/diffusion.xml" --log "$out/diffusion.flog"
echo
echo "The log is $build/demo/diffusion.flog. Next:"
echo "  $build/fleetsim view $build/demo/diffusion.flog      # replay it in a browser"
echo "  $build/fleetsim run examples/deeco/deeco.xml         # a DEECo-style text log"
echo "  docs/experiment-format.md                            # write your own experiment"
