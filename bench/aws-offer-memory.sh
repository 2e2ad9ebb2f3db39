#!/usr/bin/env bash
# Peak memory of `catalog import aws-offer` on a generated offer file whose "terms" come before
# its "products" (the order that used to keep every SKU's prices in memory), against the same
# file with products first. Usage: bench/aws-offer-memory.sh [SKUS] (default 300000).
# Prints the file size and each order's peak RSS (GNU time's "Maximum resident set size").
set -euo pipefail
skus=${1:-300000}
cd "$(dirname "$0")/.."
cargo build --locked --quiet --bin disktier
bin=target/debug/disktier
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
python3 - "$skus" "$dir" <<'PY'
import json, sys
n, d = int(sys.argv[1]), sys.argv[2]
def term(sku, unit, usd):
    return {f"{sku}.T": {"priceDimensions": {f"{sku}.T.D": {"unit": unit, "pricePerUnit": {"USD": usd},
            "description": "x" * 80, "beginRange": "0", "endRange": "Inf"}}}}
kept = {"GP3": ("Storage", "EBS:VolumeUsage.gp3", "gp3", "GB-Mo", "0.08"),
        "GP3I": ("System Operation", "EBS:VolumeP-IOPS.gp3", None, "IOPS-Mo", "0.005"),
        "GP3T": ("Provisioned Throughput", "EBS:VolumeP-Throughput.gp3", None, "GiBps-mo", "40.96")}
def products(f):
    f.write('"products": {')
    for i, (sku, (fam, usage, api, _, _)) in enumerate(kept.items()):
        attrs = {"regionCode": "us-east-1", "usagetype": usage}
        if api: attrs["volumeApiName"] = api
        f.write(("," if i else "") + json.dumps(sku) + ":" + json.dumps({"productFamily": fam, "attributes": attrs}))
    # Products of other regions, skipped unbuilt.
    for i in range(n // 10):
        f.write("," + json.dumps(f"P{i}") + ":" + json.dumps({"productFamily": "Compute Instance",
                "attributes": {"regionCode": "ap-south-2", "usagetype": "X", "instanceType": f"t{i}"}}))
    f.write("}")
def terms(f):
    f.write('"terms": {"OnDemand": {')
    for i, (sku, (_, _, _, unit, usd)) in enumerate(kept.items()):
        f.write(("," if i else "") + json.dumps(sku) + ":" + json.dumps(term(sku, unit, usd)))
    for i in range(n):
        f.write("," + json.dumps(f"S{i}") + ":" + json.dumps(term(f"S{i}", "Hrs", "0.1")))
    f.write("}}")
for name, order in [("terms-first", (terms, products)), ("products-first", (products, terms))]:
    with open(f"{d}/{name}.json", "w") as f:
        f.write("{")
        order[0](f); f.write(","); order[1](f)
        f.write(', "publicationDate": "2026-07-01T00:00:00Z"}')
PY
for order in terms-first products-first; do
    f="$dir/$order.json"
    rss=$( { /usr/bin/time -v "$bin" --no-save catalog import aws-offer "$f" --region us-east-1 -o "$dir/out.toml" >/dev/null 2>"$dir/err" || true; } 2>&1; grep "Maximum resident" "$dir/err" | awk '{print $NF}')
    status=$(grep -c "Command exited with non-zero" "$dir/err" || true)
    echo "$order: $(du -m "$f" | cut -f1) MiB file, $skus SKUs, peak RSS ${rss} KiB$( [ "$status" = 0 ] || echo ' (import failed: see below)')"
    [ "$status" = 0 ] || grep -v "^\s" "$dir/err" | head -3
done
