#!/usr/bin/env bash
# Benchmarks for the cost catalog (issue #3), figures go to BENCHMARKS.md:
#  1. `disktier plan` over the whole catalog (every region, hybrids and instance store on):
#     wall time of the release binary per invocation, target < 50 ms.
#  2. `disktier catalog import aws-offer` of a synthetic ~50 MB offer file in AWS's format:
#     wall time < 5 s and peak RSS < 100 MB (/usr/bin/time -v), side by side with the
#     non-streaming peer (python3's json.load of the same file).
#
# Usage: bench/catalog.sh [runs]   (CARGO_TARGET_DIR is honoured)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-30}
TARGET=${CARGO_TARGET_DIR:-target}
cargo build --release -p disktier >/dev/null 2>&1 || cargo build --release -p disktier
B="$TARGET/release/disktier"
WORK=$(mktemp -d /var/tmp/disktier-catalog-bench.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
export DISKTIER_DB="$WORK/db.sqlite"

echo "## plan (release binary, $RUNS runs each; wall ms min / median / max; CPU ms (user+sys) median)"
echo "   load average at start: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
python3 - "$B" "$RUNS" <<'EOF'
import resource, statistics, subprocess, sys, time
b, runs = sys.argv[1], int(sys.argv[2])
cases = [
    "--region eu-north-1 --capacity 5TiB --iops 16000 --throughput 1000MiB/s --allow-hybrid",
    "--region us-east-1 --instance m6i.xlarge --capacity 200GiB --iops 20000 --allow-ephemeral --allow-hybrid",
    "--region us-east-1 --capacity 2TiB --iops 6000 --throughput 500MiB/s --allow-hybrid --format json",
    "--region us-central1 --instance n1-standard-8 --capacity 1TiB --iops 20000 --allow-ephemeral --allow-hybrid",
]
for args in cases:
    walls, cpus = [], []
    for _ in range(runs):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run([b, "plan", *args.split()], stdout=subprocess.DEVNULL, check=True)
        walls.append((time.perf_counter() - t0) * 1e3)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append((r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime) * 1e3)
    print("  plan %-100s %6.2f / %6.2f / %6.2f ms   cpu %5.2f ms" % (
        args, min(walls), statistics.median(walls), max(walls), statistics.median(cpus)))
EOF

echo
echo "## catalog import aws-offer of a synthetic offer file"
python3 - "$WORK/offer.json" <<'EOF'
# A synthetic us-east-1 AmazonEC2 offer file in the real shape (products, terms.OnDemand,
# terms.Reserved), padded with the product variants a real file is full of (other operating
# systems, tenancies, capacity statuses, pre-installed software) until it is ~50 MB.
import json, sys, random
random.seed(1)
out = open(sys.argv[1], "w")
target = 50 * 1000 * 1000
families = ["m6i","m6id","c6i","c6id","r6i","r6id","i3","i4i","m5","m5d","c5","c5d","r5","r5d","m7i","c7i","r7i","x2idn","z1d","t3"]
sizes = ["large","xlarge","2xlarge","4xlarge","8xlarge","12xlarge","16xlarge","24xlarge","32xlarge","metal"]
oses = ["Linux","Windows","RHEL","SUSE","Red Hat Enterprise Linux with HA","Ubuntu Pro"]
tenancies = ["Shared","Dedicated","Host"]
caps = ["Used","UnusedCapacityReservation","AllocatedCapacityReservation"]
sws = ["NA","SQL Std","SQL Web","SQL Ent"]
products = []
def ebs(sku, fam, usage, api, unit, usd):
    a = {"servicecode":"AmazonEC2","location":"US East (N. Virginia)","locationType":"AWS Region","usagetype":usage,"operation":"","regionCode":"us-east-1","servicename":"Amazon Elastic Compute Cloud","volumeApiName":api}
    if fam == "Storage":
        a.update({"storageMedia":"SSD-backed","volumeType":api,"maxVolumeSize":"64 TiB" if api in ("gp3","io2") else "16 TiB","maxIopsvolume":{"gp2":"16000","gp3":"80000","io1":"64000","io2":"256000","st1":"500","sc1":"250"}[api],"maxThroughputvolume":{"gp2":"250 MiB/s","gp3":"2000 MiB/s","io1":"1000 MiB/s","io2":"4000 MiB/s","st1":"500 MiB/s","sc1":"250 MiB/s"}[api]})
    products.append((sku, fam, a, unit, usd))
for api, usd in [("gp2",0.10),("gp3",0.08),("io1",0.125),("io2",0.125),("st1",0.045),("sc1",0.015)]:
    ebs("EBS" + api.upper() + "STORAGE0", "Storage", "EBS:VolumeUsage." + api, api, "GB-Mo", usd)
ebs("EBSGP3IOPS000000", "System Operation", "EBS:VolumeP-IOPS.gp3", "gp3", "IOPS-Mo", 0.005)
ebs("EBSIO1IOPS000000", "System Operation", "EBS:VolumeP-IOPS.piops", "io1", "IOPS-Mo", 0.065)
ebs("EBSIO2IOPST10000", "System Operation", "EBS:VolumeP-IOPS.io2", "io2", "IOPS-Mo", 0.065)
ebs("EBSIO2IOPST20000", "System Operation", "EBS:VolumeP-IOPS.io2.tier2", "io2", "IOPS-Mo", 0.0455)
ebs("EBSIO2IOPST30000", "System Operation", "EBS:VolumeP-IOPS.io2.tier3", "io2", "IOPS-Mo", 0.03185)
ebs("EBSGP3THRU000000", "Provisioned Throughput", "EBS:VolumeP-Throughput.gp3", "gp3", "GiBps-mo", 40.96)
out.write('{\n  "formatVersion" : "v1.0",\n  "disclaimer" : "synthetic disktier benchmark file",\n  "offerCode" : "AmazonEC2",\n  "version" : "20260701000000",\n  "publicationDate" : "2026-07-01T00:00:00Z",\n  "products" : {\n')
n = 0; size = 0; skus = []
def inst_products():
    i = 0
    while True:
        for f in families:
            for s in sizes:
                for o in oses:
                    for t in tenancies:
                        for c in caps:
                            for w in sws:
                                i += 1
                                yield i, f, s, o, t, c, w
gen = inst_products()
first = True
def emit(sku, fam, attrs):
    global first, size
    text = ('' if first else ',\n') + '    "%s" : %s' % (sku, json.dumps({"sku": sku, "productFamily": fam, "attributes": attrs}, indent=6))
    first = False
    out.write(text); size += len(text)
for sku, fam, a, unit, usd in products:
    emit(sku, fam, a); skus.append((sku, unit, usd))
# Products take about three quarters of this file; terms the rest.
while size < target * 0.75:
    i, f, s, o, t, c, w = next(gen)
    sku = "SYN%013d" % i
    store = "1 x 237 NVMe SSD" if f.endswith("d") or f in ("i3","i4i") else "EBS only"
    a = {"servicecode":"AmazonEC2","location":"US East (N. Virginia)","locationType":"AWS Region","instanceType":f + "." + s,"currentGeneration":"Yes","instanceFamily":"General purpose","vcpu":"4","physicalProcessor":"Intel Xeon 8375C (Ice Lake)","clockSpeed":"3.5 GHz","memory":"16 GiB","storage":store,"networkPerformance":"Up to 12500 Megabit","processorArchitecture":"64-bit","tenancy":t,"operatingSystem":o,"licenseModel":"No License required","usagetype":"BoxUsage:" + f + "." + s,"operation":"RunInstances","capacitystatus":c,"classicnetworkingsupport":"false","dedicatedEbsThroughput":"Up to 10000 Mbps","ecu":"NA","enhancedNetworkingSupported":"Yes","gpuMemory":"NA","intelAvxAvailable":"Yes","intelAvx2Available":"Yes","intelTurboAvailable":"Yes","marketoption":"OnDemand","normalizationSizeFactor":"8","preInstalledSw":w,"processorFeatures":"AVX, AVX2, Intel AVX, Intel AVX2, Intel AVX512, Intel Turbo","regionCode":"us-east-1","servicename":"Amazon Elastic Compute Cloud","vpcnetworkingsupport":"true"}
    emit(sku, "Compute Instance", a)
    skus.append((sku, "Hrs", round(random.uniform(0.05, 5.0), 4)))
out.write('\n  },\n  "terms" : {\n    "OnDemand" : {\n')
for k, (sku, unit, usd) in enumerate(skus):
    code = "JRTCKXETXF"
    term = {sku + "." + code: {"offerTermCode": code, "sku": sku, "effectiveDate": "2026-07-01T00:00:00Z", "priceDimensions": {sku + "." + code + ".6YS6EN2CT7": {"rateCode": sku + "." + code + ".6YS6EN2CT7", "description": "$%s per %s" % (usd, unit), "beginRange": "0", "endRange": "Inf", "unit": unit, "pricePerUnit": {"USD": "%.10f" % usd}, "appliesTo": []}}, "termAttributes": {}}}
    out.write(('' if k == 0 else ',\n') + '      "%s" : %s' % (sku, json.dumps(term)))
out.write('\n    },\n    "Reserved" : {\n')
for k, (sku, unit, usd) in enumerate(skus[: len(skus) // 3]):
    code = "4NA7Y494T4"
    term = {sku + "." + code: {"offerTermCode": code, "sku": sku, "priceDimensions": {sku + "." + code + ".2TG2D8R56U": {"unit": "Quantity", "pricePerUnit": {"USD": "%.2f" % (usd * 5000)}}}, "termAttributes": {"LeaseContractLength": "1yr", "OfferingClass": "standard", "PurchaseOption": "All Upfront"}}}
    out.write(('' if k == 0 else ',\n') + '      "%s" : %s' % (sku, json.dumps(term)))
out.write('\n    }\n  }\n}\n')
out.close()
EOF
SIZE=$(stat -c %s "$WORK/offer.json")
echo "  synthetic offer file: $((SIZE / 1000000)) MB ($SIZE bytes)"
# Warm the page cache so both tools read from memory.
cat "$WORK/offer.json" >/dev/null
measure() { # label, command...
  local label=$1; shift
  /usr/bin/time -v "$@" 2>"$WORK/time.txt" >/dev/null || { cat "$WORK/time.txt"; exit 1; }
  local wall rss
  wall=$(grep 'Elapsed (wall clock)' "$WORK/time.txt" | awk '{print $NF}')
  rss=$(grep 'Maximum resident set size' "$WORK/time.txt" | awk '{print $NF}')
  printf '  %-44s wall %8s   max RSS %7.1f MB\n' "$label" "$wall" "$(echo "$rss/1024" | bc -l)"
}
for i in 1 2 3; do
  measure "disktier catalog import aws-offer (run $i)" "$B" catalog import aws-offer "$WORK/offer.json" --region us-east-1 -o "$WORK/out.toml"
done
measure "peer: python3 json.load (whole file)" python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$WORK/offer.json"
echo "  imported: $(grep -c '^\[\[instance_price\]\]' "$WORK/out.toml") instance prices, $(grep -c '^\[\[volume_price\]\]' "$WORK/out.toml") volume prices"
