-- results/queries.sql - ready queries over a gpuplan results database.
--
--   sqlite3 -header -column results/pool-size.db < results/queries.sql
--
-- Each query stands alone: copy the one you need into a script.  Tables and
-- metric names are those of docs/results.md.  A sweep's overrides are rows
-- of params (run_id, key, value) and queries pick the keys they group by with
-- LIKE patterns, so pools and workloads of any name work.  Metrics are looked
-- up with scope 'all' (the whole cluster); use a pool or workload name instead
-- to narrow them.  Figures a scenario does not produce (cost before pools have
-- prices, for example) come out empty rather than removing the run.
--
-- Sharing modes and quantization are swept as --set paths like any other
-- (pools.NAME.sharing={mode: mps, replicas: 4}, workloads.NAME.quantization=int8;
-- see scenarios/sweeps/sharing-quant.yaml).  In a database whose runs do not
-- override them, query 2 shows the base scenario's mode as "(base)" and query
-- 3 returns no rows.


-- 1. Every run: its overrides and headline figures.
SELECT r.run_id,
       (SELECT group_concat(key || '=' || value, ' ')
          FROM (SELECT key, value FROM params p WHERE p.run_id = r.run_id ORDER BY key))
         AS params,
       round(q.value) AS queue_p95_s,
       round(d.value, 1) AS deadline_met_pct,
       round(a.value, 1) AS gpu_alloc_pct,
       round(c.value, 2) AS cost_per_verified
  FROM runs r
  LEFT JOIN metrics q ON q.run_id = r.run_id AND q.scope = 'all' AND q.name = 'queue_time_p95_s'
  LEFT JOIN metrics d ON d.run_id = r.run_id AND d.scope = 'all' AND d.name = 'deadline_met_pct'
  LEFT JOIN metrics a ON a.run_id = r.run_id AND a.scope = 'all' AND a.name = 'gpu_allocation_pct'
  LEFT JOIN metrics c ON c.run_id = r.run_id AND c.scope = 'all'
                     AND c.name = 'cost_per_verified_result'
 ORDER BY r.run_id
 LIMIT 10;


-- 2. Queue p95 and cost per verified result by sharing mode and pool size,
--    over seeds (and any other override): mean, and worst case for the queue.
--    A stalled run (work left that nothing could start) has no queue figure
--    for the jobs that never ran, so the means leave it out: `stalled` counts
--    such runs (and `horizon` those cut by the horizon) so that none is
--    dropped silently; read their rows in query 1.
SELECT coalesce(sh.value, '(base)') AS sharing,
       CAST(n.value AS INTEGER) AS nodes,
       count(*) AS runs,
       sum(r.status = 'stalled') AS stalled,
       sum(r.status = 'horizon') AS horizon,
       round(avg(q.value)) AS queue_p95_s,
       round(max(q.value)) AS worst_queue_p95_s,
       round(avg(c.value), 2) AS cost_per_verified
  FROM runs r
  JOIN params n ON n.run_id = r.run_id AND n.key LIKE 'pools.%.nodes'
  LEFT JOIN params sh ON sh.run_id = r.run_id AND sh.key LIKE 'pools.%.sharing%'
  LEFT JOIN metrics q ON q.run_id = r.run_id AND q.scope = 'all' AND q.name = 'queue_time_p95_s'
  LEFT JOIN metrics c ON c.run_id = r.run_id AND c.scope = 'all'
                     AND c.name = 'cost_per_verified_result'
 GROUP BY sharing, nodes
 ORDER BY sharing, nodes;


-- 3. Pivot per quantization: one column per workloads.NAME.quantization value,
--    one row per sharing mode, the mean over seeds and pool sizes of the metric
--    named in `pick`: cost per verified result here; 'oom_kills' shows where
--    time-slicing overcommits VRAM and a smaller weight format fits.  No rows
--    for a database without runs that override a quantization.
WITH pick(metric) AS (VALUES ('cost_per_verified_result'))
SELECT coalesce(sh.value, '(base)') AS sharing,
       round(avg(CASE WHEN qz.value = 'fp16' THEN m.value END), 2) AS fp16,
       round(avg(CASE WHEN qz.value = 'bf16' THEN m.value END), 2) AS bf16,
       round(avg(CASE WHEN qz.value = 'fp8' THEN m.value END), 2) AS fp8,
       round(avg(CASE WHEN qz.value = 'int8' THEN m.value END), 2) AS int8,
       round(avg(CASE WHEN qz.value = 'int4' THEN m.value END), 2) AS int4
  FROM runs r
  JOIN params qz ON qz.run_id = r.run_id AND qz.key LIKE 'workloads.%.quantization'
  LEFT JOIN params sh ON sh.run_id = r.run_id AND sh.key LIKE 'pools.%.sharing%'
  LEFT JOIN metrics m ON m.run_id = r.run_id AND m.scope = 'all'
                     AND m.name = (SELECT metric FROM pick)
 GROUP BY sharing
 ORDER BY sharing;


-- 4. The same pivot pattern on what every sweep can vary today: queue p95
--    (seconds, mean over seeds) per pool size and scheduler order.
SELECT CAST(n.value AS INTEGER) AS nodes,
       round(avg(CASE WHEN o.value = 'fifo' THEN q.value END)) AS fifo,
       round(avg(CASE WHEN o.value = 'priority' THEN q.value END)) AS priority,
       round(avg(CASE WHEN o.value = 'edf' THEN q.value END)) AS edf,
       round(avg(CASE WHEN o.value = 'sjf' THEN q.value END)) AS sjf
  FROM runs r
  JOIN params n ON n.run_id = r.run_id AND n.key LIKE 'pools.%.nodes'
  JOIN params o ON o.run_id = r.run_id AND o.key = 'scheduler.order'
  LEFT JOIN metrics q ON q.run_id = r.run_id AND q.scope = 'all' AND q.name = 'queue_time_p95_s'
 GROUP BY nodes
 ORDER BY nodes;


-- 5. The smallest passing pool: for each combination of the other overrides,
--    the fewest GPUs with which every seed met every deadline and kept the
--    p95 queue under an hour.  Pool size is capacity_gpus, so sweeps over
--    nodes, gpus_per_node or both work alike.  Edit the two limits in the
--    WHERE clause to your own targets.
WITH per_run AS (
  SELECT r.run_id,
         coalesce((SELECT group_concat(key || '=' || value, ' ')
                     FROM (SELECT key, value FROM params p
                            WHERE p.run_id = r.run_id AND p.key <> 'seed'
                              AND p.key NOT LIKE 'pools.%.nodes'
                              AND p.key NOT LIKE 'pools.%.gpus_per_node'
                            ORDER BY key)), '') AS config,
         (SELECT group_concat(key || '=' || value, ' ')
            FROM (SELECT key, value FROM params p
                   WHERE p.run_id = r.run_id
                     AND (p.key LIKE 'pools.%.nodes' OR p.key LIKE 'pools.%.gpus_per_node')
                   ORDER BY key)) AS pool,
         (SELECT value FROM metrics m WHERE m.run_id = r.run_id AND m.scope = 'all'
             AND m.name = 'capacity_gpus') AS gpus,
         (SELECT value FROM metrics m WHERE m.run_id = r.run_id AND m.scope = 'all'
             AND m.name = 'deadline_met_pct') AS met_pct,
         (SELECT value FROM metrics m WHERE m.run_id = r.run_id AND m.scope = 'all'
             AND m.name = 'queue_time_p95_s') AS p95
    FROM runs r
),
per_pool AS (
  SELECT config, pool, gpus, count(*) AS runs, min(met_pct) AS worst_met_pct,
         max(p95) AS worst_p95
    FROM per_run
   GROUP BY config, pool, gpus
)
SELECT config, pool, CAST(min(gpus) AS INTEGER) AS gpus, runs,
       round(worst_met_pct, 1) AS worst_deadline_met_pct, round(worst_p95) AS worst_queue_p95_s
  FROM per_pool
 WHERE worst_met_pct >= 100 AND worst_p95 <= 3600
 GROUP BY config
 ORDER BY config;

-- 6. Every run of a database side by side: its overrides, peak demand, queue time,
--    the four kinds of utilization that matter here, OOM kills and completions
--    (the table of docs/sharing.md).
SELECT r.run_id,
       coalesce((SELECT group_concat(value, ' ') FROM params p WHERE p.run_id = r.run_id), 'exclusive') AS plan,
       max(CASE WHEN m.name = 'peak_demand_gpus' THEN m.value END) AS peak_demand,
       round(max(CASE WHEN m.name = 'queue_time_mean_s' THEN m.value END)) AS queue_mean_s,
       round(max(CASE WHEN m.name = 'engine_active_pct' THEN m.value END), 1) AS engine_pct,
       round(max(CASE WHEN m.name = 'vram_used_pct' THEN m.value END), 1) AS vram_pct,
       max(CASE WHEN m.name = 'oom_kills' THEN m.value END) AS oom_kills,
       max(CASE WHEN m.name = 'jobs_completed' THEN m.value END) AS completed
FROM runs r JOIN metrics m ON m.run_id = r.run_id AND m.scope = 'all'
GROUP BY r.run_id ORDER BY r.run_id;
