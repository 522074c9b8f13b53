-- wrk script for make service-bench (Tools/service-bench.sh). The route comes from
-- the environment, so one file serves every run:
--   ROUTE      get | put | post | list | health
--   FIRST_NOTE, LAST_NOTE   the seeded IDs that get, put and list pick from at random
--   POST_PATH  where post sends its notes (default /notes; /notebooks/ID/notes appends)
--   PACE_MS    if set, each connection waits this many milliseconds before each
--              request: a paced load of at most connections × 1000 / PACE_MS a second
--   ACK_FILE   post only: each thread appends the ID of every 201 it receives to
--              ACK_FILE.N, flushed at once: the creates the service acknowledged
-- done() prints one line, `result {json}`, that the bench script reads.

local route = os.getenv("ROUTE") or "get"
local first = tonumber(os.getenv("FIRST_NOTE") or "1")
local last = tonumber(os.getenv("LAST_NOTE") or "1")
local postPath = os.getenv("POST_PATH") or "/notes"
local ackFile = os.getenv("ACK_FILE")
local paceMs = tonumber(os.getenv("PACE_MS") or "")

local threads = {}
local counter = 0

function setup(thread)
   counter = counter + 1
   thread:set("number", counter)
   table.insert(threads, thread)
end

local acks = nil

function init(args)
   math.randomseed(os.time() * 100 + number)
   if ackFile and route == "post" then
      acks = io.open(ackFile .. "." .. number, "a")
   end
end

local body = '{"title":"Benchmark note","body":"Written by wrk for make service-bench: a short note of about a hundred bytes."}'
local json = { ["Content-Type"] = "application/json" }

function request()
   if route == "get" then
      return wrk.format("GET", "/notes/" .. math.random(first, last))
   elseif route == "put" then
      return wrk.format("PUT", "/notes/" .. math.random(first, last), json, body)
   elseif route == "post" then
      return wrk.format("POST", postPath, json, body)
   elseif route == "health" then
      return wrk.format("GET", "/health")
   else
      return wrk.format("GET", "/notes?limit=20&after=" .. math.random(first - 1, last - 20))
   end
end

if paceMs then
   function delay()
      return paceMs
   end
end

if ackFile then
   function response(status, headers, responseBody)
      if status == 201 and acks then
         local id = string.match(responseBody, '"id":(%d+)')
         if id then
            acks:write(id, "\n")
            acks:flush()
         end
      end
   end
end

function done(summary, latency, requests)
   local e = summary.errors
   io.write(string.format(
      'result {"requests":%d,"seconds":%.3f,"rps":%.1f,"p50_ms":%.3f,"p99_ms":%.3f,"max_ms":%.3f,' ..
      '"connect_errors":%d,"read_errors":%d,"write_errors":%d,"status_errors":%d,"timeouts":%d}\n',
      summary.requests, summary.duration / 1e6, summary.requests / (summary.duration / 1e6),
      latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency.max / 1000,
      e.connect, e.read, e.write, e.status, e.timeout))
end
