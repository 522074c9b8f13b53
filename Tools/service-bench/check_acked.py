"""Reads back every acknowledged create after the kill -9 (Tools/service-bench.sh).

usage: check_acked.py PORT ACK_FILE SERVICE
Prints one json line: how many IDs were acknowledged and how many a GET no longer finds.
"""
import http.client
import json
import sys

port, ack_file, service = int(sys.argv[1]), sys.argv[2], sys.argv[3]
with open(ack_file) as f:
    ids = [int(line) for line in f if line.strip()]

connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
missing = []
for note_id in ids:
    connection.request("GET", f"/notes/{note_id}")
    response = connection.getresponse()
    body = response.read()
    if response.status != 200 or json.loads(body).get("id") != note_id:
        missing.append(note_id)
connection.close()

print(json.dumps({"service": service, "label": "kill-9", "acknowledged": len(ids),
                  "distinct": len(set(ids)), "missing": len(missing), "first_missing": missing[:10]}))
