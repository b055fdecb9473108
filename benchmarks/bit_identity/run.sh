#!/usr/bin/env bash
# Deterministic outputs of a fixed set of audits, sanity checks and the quick reproduction,
# for checking that a refactor changes no number: run it on the code before and after,
# then compare.py BEFORE AFTER (timing fields ignored).
# usage: run.sh REPO OUTDIR
set -e
R=$1; O=$2; mkdir -p $O; cd $R
D=${DPAUDIT:-.venv/bin/dpaudit}
export PYTHONPATH=$R/src
$D audit laplace --epsilon 1 --samples 20000 --final-samples 40000 --seed 3 --json -q > $O/audit_laplace.json
$D audit adept --epsilon 1 --dim 4 --samples 20000 --final-samples 40000 --seed 1 --json -q > $O/audit_adept.json || true
$D audit randomized-response --epsilon 1 --samples 20000 --final-samples 40000 --seed 2 --json -q > $O/audit_rr.json || true
$D audit laplace --epsilon 0.5 --mode dpsniper --samples 20000 --final-samples 40000 --seed 0 --json -q > $O/audit_dpsniper.json
$D audit ome --epsilon 1 -p lambda=10 --domain -10,10 --samples 20000 --final-samples 40000 --seed 0 --json -q > $O/audit_ome.json || true
$D sanity-check dptext --epsilon 1 --dim 8 --runs 100000 --seed 0 --json -q > $O/sanity_dptext.json
$D sanity-check laplace --epsilon 1 --dim 8 --runs 100000 --seed 0 --json -q > $O/sanity_laplace.json
$D audit cmp --epsilon 10 --vocabulary-size 2000 --samples 2000 --final-samples 4000 --max-pairs 3 --seed 0 --json -q > $O/audit_word.json 2>$O/audit_word.err || true
$D reproduce all --scale quick --out $O/repro -q --force > $O/repro.log 2>&1
