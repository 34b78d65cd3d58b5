#!/usr/bin/env python3
"""Writes the independent labelled corpus of Spark event logs for `sparktrace diagnose`.

The cases (seed, shape, injected problems, strength, expected / allowed finding ids) come from
independent_seeds.json, written before sparktrace was run on any of these logs and without looking at its
rules, thresholds or simulator. This module turns each case into one plain-text Spark event log (JSON lines,
the shapes of real Spark 3.4 / 3.5 / 4.0 logs), deterministically from the case's seed:

* the application's shape (plain spark-submit or a Spark Connect server running several operations; static or
  dynamic allocation; 1-64 executors of 1-16 cores on Kubernetes, YARN or standalone; 1-6 jobs of 1-12 stages
  in all; 8-2000 partitions; lognormal task durations with per-stage medians of 0.2-60 s) depends only on the
  seed and the case's `shape` entry, so a problem case and its clean twin share it;
* the tasks are placed on the executors' cores by a small list scheduler (waves, executors that arrive late or
  die, retries, aborted stages, FetchFailed stage retries, speculative copies);
* problems are injected into that schedule at the strength the seeds file defines.

Python 3 standard library only.

Usage: independent_workloads.py --out-dir DIR [--seeds FILE] [--only TEXT] [--labels FILE]
  writes DIR/<case>/<application id> per case and prints (or writes to --labels) the labels as JSON.
"""

import argparse
import heapq
import json
import math
import os
import random
import re
import sys
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
SEEDS_FILE = os.path.join(HERE, "independent_seeds.json")
MiB = 1 << 20
GiB = 1 << 30
T_BASE = 1_704_067_200_000  # 2024-01-01T00:00:00Z


def load_seeds(path=SEEDS_FILE):
    with open(path) as handle:
        return json.load(handle)


def case_directory_name(case):
    return re.sub(r"[^A-Za-z0-9_.+-]+", "_", case["name"]).strip("_")


# --------------------------------------------------------------------------------------------------------
# The model


class Executor:
    def __init__(self, order, exec_id, host, cores, add_ms, request_ms):
        self.order = order
        self.id = exec_id
        self.host = host
        self.cores = cores
        self.add_ms = add_ms
        self.request_ms = request_ms
        self.remove_ms = None
        self.remove_reason = None
        self.gc_total = 0
        self.gc_count = 0


class Task:
    """One partition of a stage: its base compute time and what was injected."""

    def __init__(self, partition, compute_ms, weight):
        self.partition = partition
        self.compute_ms = compute_ms
        self.weight = weight
        self.gc = 0.01
        self.fetch = 0.0
        self.write = 0.0
        self.cpu = 0.8
        self.slow = 1.0
        self.mem_spill = 0
        self.disk_spill = 0
        self.peak = 0
        self.failures = {}  # attempt number -> (kind, fraction of the duration, class, description)
        self.fatal = False
        self.fixed_ms = None  # the duration, when set directly (write stages, single-task stages)

    def duration_ms(self):
        if self.fixed_ms is not None:
            base = self.fixed_ms
        else:
            base = self.compute_ms / max(0.2, 1.0 - self.gc - self.fetch - self.write)
        return max(30, int(base * self.slow))


class Stage:
    def __init__(self, job, position, kind):
        self.job = job
        self.position = position
        self.kind = kind  # scan | reduce
        self.roles = set()
        self.heavy = False
        self.partitions = 8
        self.median_s = 1.0
        self.sigma = 0.25
        self.input_per_task = 0
        self.read_per_task = 0
        self.write_per_task = 0
        self.output_per_task = 0
        self.result_bytes = 2000
        self.writes_output = False
        self.write_mib_s = None
        self.cpu_share = 0.8
        self.gc_base = 0.01
        self.fetch_base = 0.0
        self.write_base = 0.0
        self.tasks = []
        self.id = None
        self.shuffle_id = None
        self.parents = []
        self.name = ""
        self.kill_plan = None  # executor kills while this stage runs
        self.fetch_failed_plan = None
        self.speculation_plan = None


class Job:
    def __init__(self, index, kind):
        self.index = index
        self.kind = kind  # query | write
        self.stages = []
        self.op = None
        self.gap_before_ms = 0
        self.fails = False
        self.id = None


class Operation:
    def __init__(self, index, kind, user, session, operation_id):
        self.index = index
        self.kind = kind
        self.user = user
        self.session = session
        self.id = operation_id
        self.jobs = []
        self.gap_before_ms = 0
        self.fails = False


class Shape:
    pass


def log_uniform(rng, low, high):
    return math.exp(rng.uniform(math.log(low), math.log(high)))


# --------------------------------------------------------------------------------------------------------
# Shapes


CONNECT_VERSIONS = ["3.5.1", "3.5.3", "4.0.0"]
PLAIN_VERSIONS = ["3.4.1", "3.5.1", "3.5.3", "4.0.0"]
USERS = ["etl_user", "airflow", "svc_reporting", "data_eng", "ana.lyst"]


def build_shape(seed, spec):
    rng = random.Random(seed)
    shape = Shape()
    shape.seed = seed
    shape.spec = spec
    if spec.get("fixed") == "etl":
        return build_etl_shape(seed, spec, rng)
    mode = spec.get("mode", "any")
    if mode == "any":
        mode = rng.choice(["plain", "plain", "connect"])
    shape.mode = mode
    shape.version = spec.get("spark_version") or rng.choice(CONNECT_VERSIONS if mode == "connect" else PLAIN_VERSIONS)
    shape.platform = spec.get("platform") or rng.choice(["kubernetes", "kubernetes", "yarn", "standalone"])
    allocation = spec.get("allocation", "any")
    if allocation == "any":
        allocation = "dynamic" if rng.random() < 0.4 else "static"
    shape.allocation = allocation
    cores = rng.choice([1, 2, 4, 4, 4, 5, 8, 8, 16])
    executors = max(1, int(round(log_uniform(rng, 1, 64))))
    executors = max(executors, spec.get("min_executors", 1))
    while executors * cores < spec.get("min_slots", 1):
        if executors < 64:
            executors = min(64, executors * 2)
        else:
            cores = min(16, cores * 2)
    while executors * cores > 512 and executors > spec.get("min_executors", 1):
        executors -= 1
    shape.cores = cores
    shape.executors = executors
    shape.slots = cores * executors
    shape.memory_gb = rng.choice([4, 8, 8, 12, 16, 28])
    shape.startup_ms = rng.randint(2000, 6000)
    shape.first_job_ms = rng.randint(1500, 5000)
    shape.speculation = rng.random() < 0.25
    shape.committer = rng.choice(["magic", "directory", "file"])
    shape.adaptive = rng.random() < 0.8
    shape.shuffle_tracking_timeout = spec.get("shuffle_tracking_timeout")
    requires = set(spec.get("requires", []))
    min_jobs = spec.get("min_jobs", 1)

    # Jobs (and operations).
    jobs = []
    ops = []
    if mode == "plain":
        n_jobs = rng.randint(max(1, min_jobs), 6)
        for j in range(n_jobs):
            jobs.append(Job(j, "query"))
        if "write" in requires or rng.random() < 0.4:
            jobs[-1].kind = "write"
    else:
        n_ops = rng.randint(max(2, spec.get("min_ops", 2)), 5)
        sessions = [(rng.choice(USERS), str(uuid.UUID(int=rng.getrandbits(128), version=4)))
                    for _ in range(rng.randint(1, 2))]
        for o in range(n_ops):
            user, session = sessions[o % len(sessions)]
            op = Operation(o, "query", user, session, str(uuid.UUID(int=rng.getrandbits(128), version=4)))
            ops.append(op)
        if "write" in requires or rng.random() < 0.4:
            ops[rng.randrange(1, n_ops)].kind = "write"
        two_job_op = rng.randrange(n_ops) if (min_jobs >= 2 or rng.random() < 0.3) else None
        for op in ops:
            for _ in range(2 if op.index == two_job_op else 1):
                if len(jobs) >= 6:
                    break
                job = Job(len(jobs), "query")
                job.op = op
                op.jobs.append(job)
                jobs.append(job)
            if op.kind == "write":
                op.jobs[-1].kind = "write"
    shape.jobs = jobs
    shape.ops = ops

    # Stages per job (1-12 in all).
    budget = 12
    for job in jobs:
        remaining_jobs = len(jobs) - job.index - 1
        n = rng.randint(1, 4)
        n = max(1, min(n, budget - remaining_jobs))
        budget -= n
        job.n_stages = n
    # The job that hosts the required stages: the write job for writes, else a random one.
    write_jobs = [j for j in jobs if j.kind == "write"]
    query_jobs = [j for j in jobs if j.kind == "query"]
    main = rng.choice(jobs)
    if requires & {"skew_stage", "heavy_shuffle_stage", "light_shuffle_stage", "shuffle_heavy"}:
        main.n_stages = max(main.n_stages, 3 if ("light_shuffle_stage" in requires or main.kind == "write") else 2)
    if "single_task_stage" in requires:
        main = rng.choice(query_jobs) if query_jobs else main
        if main.kind == "write":
            main.kind = "query"
        main.n_stages = max(main.n_stages, 2)
    if "shuffle_heavy" in requires:
        for job in jobs:
            job.n_stages = max(job.n_stages, 2)
    shape.main_job = main
    while sum(j.n_stages for j in jobs) > 12:
        others = [j for j in jobs if j is not main and j.n_stages > (2 if "shuffle_heavy" in requires else 1)]
        if not others:
            break
        max(others, key=lambda j: j.n_stages).n_stages -= 1
    for job in jobs:
        for position in range(job.n_stages):
            stage = Stage(job, position, "scan" if position == 0 else "reduce")
            job.stages.append(stage)
            make_stage_profile(rng, shape, stage)
    # Requirements.
    if "single_task_stage" in requires:
        stage = main.stages[-1]
        stage.roles.add("single")
        stage.partitions = 1
        stage.median_s = rng.uniform(1.0, 3.0)
        stage.heavy = False
    if "skew_stage" in requires or "heavy_shuffle_stage" in requires:
        stage = main.stages[1]
        stage.heavy = True
        stage.median_s = rng.uniform(8, 30)
        stage.partitions = min(2000, max(100 if "skew_stage" in requires else 16,
                                         shape.slots * rng.randint(2, 4)))
        stage.sigma = rng.uniform(0.2, 0.3)
        stage.roles.add("skew" if "skew_stage" in requires else "heavy_shuffle")
        stage.roles.add("heavy_shuffle")
    if "light_shuffle_stage" in requires:
        stage = main.stages[-2] if main.stages[-1].writes_output or "single" in main.stages[-1].roles else main.stages[-1]
        if stage.position == 0:
            stage = main.stages[1]
        stage.roles.add("light_shuffle")
        stage.median_s = rng.uniform(0.2, 0.5)
        stage.partitions = rng.randint(16, 64)
        stage.heavy = False
        stage.sigma = 0.25
    if "write" in requires:
        job = write_jobs[-1] if write_jobs else jobs[-1]
        stage = job.stages[-1]
        stage.heavy = True
        stage.partitions = min(2000, max(8, shape.slots * rng.randint(2, 4)))
    fit_wall_time(rng, shape)
    if "shuffle_heavy" in requires:
        make_shuffle_heavy(shape)
    assign_bytes(rng, shape)
    return shape


def make_stage_profile(rng, shape, stage):
    job = stage.job
    last = stage.position == job.n_stages - 1
    stage.heavy = rng.random() < 0.6
    if stage.heavy:
        stage.median_s = log_uniform(rng, 2, 60)
        waves = rng.randint(2, 6)
        waves = max(1, min(waves, int(900 / stage.median_s)))
        stage.partitions = min(2000, max(8, shape.slots * waves))
    else:
        stage.median_s = log_uniform(rng, 0.2, 2)
        partitions = int(log_uniform(rng, 8, 2000))
        partitions = min(partitions, max(8, shape.slots * 20))
        if partitions < shape.slots:
            stage.median_s = min(stage.median_s, 1.0)
        stage.partitions = partitions
    stage.sigma = rng.uniform(0.18, 0.3)
    stage.cpu_share = rng.uniform(0.65, 0.9)
    stage.gc_base = rng.uniform(0.005, 0.03)
    stage.fetch_base = rng.uniform(0.002, 0.03) if stage.kind == "reduce" else 0.0
    stage.write_base = rng.uniform(0.01, 0.04) if not last else 0.0
    if last and job.kind == "write":
        stage.writes_output = True
        stage.heavy = True
        stage.output_per_task = rng.choice([64, 128, 128, 256, 512]) * MiB
        stage.write_mib_s = rng.uniform(8, 12)
        stage.median_s = stage.output_per_task / MiB / stage.write_mib_s
        stage.cpu_share = rng.uniform(0.6, 0.75)
        stage.partitions = min(2000, max(8, shape.slots * rng.randint(1, 3)))
    stage.result_bytes = rng.randint(1500, 6000) if last and job.kind == "query" else rng.randint(1500, 3000)


def stage_wall_estimate(stage, slots):
    waves = math.ceil(stage.partitions / max(1, slots))
    return waves * stage.median_s * 1.2


def fit_wall_time(rng, shape):
    """Scales medians / partition counts so the application computes for 3-40 minutes and stays below ~9000
    tasks in all."""
    target_low, target_high = 180, 2400
    for _ in range(12):
        stages = [s for j in shape.jobs for s in j.stages]
        total = sum(stage_wall_estimate(s, shape.slots) for s in stages)
        tasks = sum(s.partitions for s in stages)
        if tasks > 9000:
            for s in sorted(stages, key=lambda s: -s.partitions)[:2]:
                floor = 100 if "skew" in s.roles else 8
                s.partitions = max(floor, s.partitions // 2)
            continue
        if total < target_low:
            factor = target_low / total * rng.uniform(1.0, 1.8)
            for s in stages:
                if "single" in s.roles or "light_shuffle" in s.roles:
                    continue
                if s.writes_output:
                    s.partitions = min(2000, int(s.partitions * factor) + 1)
                    continue
                new = min(60.0, s.median_s * factor)
                if new >= 59.9 or s.heavy:
                    s.partitions = min(2000, int(s.partitions * max(1.0, factor * s.median_s / new)) + 1)
                s.median_s = new
                if "skew" in s.roles or "heavy_shuffle" in s.roles:
                    s.median_s = min(max(s.median_s, 8), 30)
        elif total > target_high:
            factor = target_high / total
            for s in stages:
                if "single" in s.roles:
                    continue
                if s.writes_output or "skew" in s.roles or "heavy_shuffle" in s.roles:
                    floor = 100 if "skew" in s.roles else 8
                    s.partitions = max(floor, int(s.partitions * factor))
                    continue
                if "light_shuffle" in s.roles:
                    continue
                s.median_s = max(0.2, s.median_s * factor)
        else:
            break


def make_shuffle_heavy(shape):
    """The stages that exchange data (shuffle writers and readers) hold most of the task time."""
    for job in shape.jobs:
        for stage in job.stages:
            if stage.kind == "reduce" and not stage.writes_output and "light_shuffle" not in stage.roles \
                    and "single" not in stage.roles:
                stage.heavy = True
                stage.median_s = max(stage.median_s, 6.0)
                stage.partitions = max(stage.partitions, min(2000, shape.slots * 2))


def assign_bytes(rng, shape):
    shuffle_id = 0
    for job in shape.jobs:
        previous = None
        for stage in job.stages:
            last = stage.position == len(job.stages) - 1
            if stage.kind == "scan":
                per_task = (rng.uniform(64, 512) if stage.heavy else rng.uniform(1, 64)) * MiB
                stage.input_per_task = int(per_task)
            else:
                total = previous.write_per_task * previous.partitions
                if "heavy_shuffle" in stage.roles:
                    total = max(total, int(rng.uniform(8, 24) * GiB))
                    previous.write_per_task = total // previous.partitions
                stage.read_per_task = max(1024, total // stage.partitions)
            if not last:
                source = stage.input_per_task or stage.read_per_task
                stage.write_per_task = max(4096, int(source * rng.uniform(0.2, 0.9)))
                stage.shuffle_id = shuffle_id
                shuffle_id += 1
            previous = stage


def build_etl_shape(seed, spec, rng):
    """The common healthy ETL application: scan 64 x ~20 s, 200-partition shuffle (~6 s), write 64 x ~15 s of
    128 MiB each."""
    shape = Shape()
    shape.seed = seed
    shape.spec = spec
    shape.mode = "plain"
    shape.version = spec.get("spark_version", "3.5.3")
    shape.platform = ["kubernetes", "yarn", "standalone"][seed % 3]
    shape.allocation = "static"
    shape.cores, shape.executors = 4, 16
    shape.slots = 64
    shape.memory_gb = 16
    shape.startup_ms = rng.randint(2500, 5000)
    shape.first_job_ms = rng.randint(2000, 4000)
    shape.speculation = False
    shape.committer = "magic"
    shape.adaptive = False
    shape.shuffle_tracking_timeout = None
    listing = Job(0, "query")
    listing.n_stages = 1
    etl = Job(1, "write")
    etl.n_stages = 3
    shape.jobs = [listing, etl]
    shape.ops = []
    shape.main_job = etl
    stage = Stage(listing, 0, "scan")
    stage.partitions, stage.median_s, stage.sigma, stage.heavy = 16, 0.4, 0.2, False
    stage.cpu_share, stage.gc_base = 0.7, 0.01
    stage.input_per_task = 64 * 1024
    listing.stages = [stage]
    scan = Stage(etl, 0, "scan")
    scan.partitions, scan.median_s, scan.sigma, scan.heavy = 64, 20.0, 0.2, True
    scan.input_per_task, scan.write_per_task = 256 * MiB, 96 * MiB
    scan.cpu_share, scan.gc_base, scan.write_base, scan.shuffle_id = 0.8, 0.02, 0.02, 0
    shuffle = Stage(etl, 1, "reduce")
    shuffle.partitions, shuffle.median_s, shuffle.sigma, shuffle.heavy = 200, 6.0, 0.2, True
    shuffle.read_per_task = 96 * MiB * 64 // 200
    shuffle.write_per_task = shuffle.read_per_task
    shuffle.cpu_share, shuffle.gc_base, shuffle.fetch_base, shuffle.write_base = 0.8, 0.02, 0.01, 0.02
    shuffle.shuffle_id = 1
    write = Stage(etl, 2, "reduce")
    write.partitions, write.sigma, write.heavy = 64, 0.2, True
    write.read_per_task = shuffle.write_per_task * 200 // 64
    write.writes_output, write.output_per_task = True, 128 * MiB
    write.write_mib_s = 128 / 15.0
    write.median_s = 15.0
    write.cpu_share, write.gc_base, write.fetch_base = 0.7, 0.02, 0.01
    etl.stages = [scan, shuffle, write]
    return shape


# --------------------------------------------------------------------------------------------------------
# Tasks and injected problems


def make_tasks(shape):
    for job in shape.jobs:
        for stage in job.stages:
            rng = random.Random(shape.seed * 1009 + job.index * 31 + stage.position)
            tasks = []
            for partition in range(stage.partitions):
                factor = math.exp(rng.gauss(0.0, stage.sigma))
                if stage.writes_output:
                    task = Task(partition, 0, factor)
                    task.fixed_ms = int(stage.output_per_task / MiB / stage.write_mib_s * 1000 * factor)
                else:
                    task = Task(partition, int(stage.median_s * 1000 * factor), factor)
                task.gc = stage.gc_base * rng.uniform(0.6, 1.4)
                task.fetch = stage.fetch_base * rng.uniform(0.5, 1.5)
                task.write = stage.write_base * rng.uniform(0.6, 1.4)
                task.cpu = min(0.97, stage.cpu_share * rng.uniform(0.9, 1.1))
                task.peak = int(rng.uniform(16, 256) * MiB) if stage.kind == "reduce" else int(rng.uniform(1, 64) * MiB)
                tasks.append(task)
            stage.tasks = tasks


def stages_of(shape):
    return [s for j in shape.jobs for s in j.stages]


def heaviest(stages):
    return max(stages, key=lambda s: sum(t.duration_ms() for t in s.tasks))


def dominant_stages(shape, share=0.7):
    stages = sorted(stages_of(shape), key=lambda s: -sum(t.duration_ms() for t in s.tasks))
    total = sum(sum(t.duration_ms() for t in s.tasks) for s in stages)
    picked, acc = [], 0
    for stage in stages:
        picked.append(stage)
        acc += sum(t.duration_ms() for t in stage.tasks)
        if acc >= share * total:
            break
    return picked


def role_stage(shape, role):
    for stage in stages_of(shape):
        if role in stage.roles:
            return stage
    return None


EXCEPTIONS = {
    "transient": [("java.net.SocketTimeoutException", "Read timed out"),
                  ("org.apache.hadoop.fs.s3a.AWSClientIOException",
                   "read on s3a://lake/raw/events/part-00042.parquet: com.amazonaws.SdkClientException: Unable to "
                   "execute HTTP request: Connection reset"),
                  ("java.io.IOException", "Connection reset by peer")],
    "fatal": [("java.lang.NumberFormatException", "For input string: \"N/A\""),
              ("org.apache.spark.SparkArithmeticException",
               "[DIVIDE_BY_ZERO] Division by zero. Use `try_divide` to tolerate divisor being 0 and return NULL instead."),
              ("org.apache.spark.api.python.PythonException",
               "Traceback (most recent call last):\n  File \"/opt/job/udfs.py\", line 41, in parse\nKeyError: 'amount'")],
    "oom": [("java.lang.OutOfMemoryError", "Java heap space")],
}


def inject_task_level(shape, problem, params, rng):
    pid, variant = problem["id"], problem["variant"]
    if pid == "gc-pressure":
        for stage in dominant_stages(shape):
            for task in stage.tasks:
                task.gc = min(0.8, params["gc_share"] * rng.uniform(0.85, 1.15))
    elif pid == "shuffle-bottleneck":
        if variant == "shuffle_write_time":
            targets = [s for s in stages_of(shape) if s.write_per_task]
            for stage in targets:
                for task in stage.tasks:
                    task.write = params["shuffle_write_share"] * rng.uniform(0.85, 1.15)
        else:
            targets = [s for s in stages_of(shape) if s.kind == "reduce" and "light_shuffle" not in s.roles]
            for stage in targets:
                for task in stage.tasks:
                    task.fetch = params["fetch_wait_share"] * rng.uniform(0.85, 1.15)
    elif pid == "data-skew":
        if variant == "tiny_stage_skew":
            stage = role_stage(shape, "light_shuffle")
        else:
            stage = role_stage(shape, "skew")
        median = sorted(t.compute_ms for t in stage.tasks)[len(stage.tasks) // 2]
        for index in rng.sample(range(len(stage.tasks)), params["skewed_tasks"]):
            task = stage.tasks[index]
            factor = params["factor"] * rng.uniform(0.92, 1.08)
            task.compute_ms = int(median * factor)
            task.weight = factor
            task.skewed = True
    elif pid == "oom-and-spill":
        stage = role_stage(shape, "skew") or role_stage(shape, "heavy_shuffle") or heaviest(stages_of(shape))
        if variant == "spill_on_skewed_tasks":
            # The skewed partitions are large (>= 2.5 GiB of shuffle data each) and spill most of it.
            spilling = [t for t in stage.tasks if getattr(t, "skewed", False)]
            mem_x, disk_x, slow = 3.0, 1.2, 1.3
            if stage.read_per_task < 256 * MiB:
                stage.read_per_task = 256 * MiB
                parent = stage.job.stages[stage.position - 1]
                parent.write_per_task = stage.read_per_task * stage.partitions // max(1, parent.partitions)
        elif "spilling_tasks" in params:
            spilling = rng.sample(stage.tasks, min(len(stage.tasks), params["spilling_tasks"]))
            for task in spilling:
                task.mem_spill = int(params["memory_spill_mib_per_task"] * MiB * rng.uniform(0.8, 1.2))
                task.disk_spill = int(params["disk_spill_mib_per_task"] * MiB * rng.uniform(0.8, 1.2))
            return
        else:
            count = max(1, int(round(params["tasks_spilling"] * len(stage.tasks))))
            spilling = rng.sample(stage.tasks, count)
            mem_x, disk_x, slow = params["memory_spill_x_read"], params["disk_spill_x_read"], params["slowdown"]
        read = stage.read_per_task or stage.input_per_task
        if "min_disk_spill_gib" in params:
            need = params["min_disk_spill_gib"] * GiB
            have = sum(read * t.weight * disk_x for t in spilling)
            if have < need:
                stage.read_per_task = read = int(read * need / have * 1.1)
                stage.job.stages[stage.position - 1].write_per_task = read * stage.partitions // max(
                    1, stage.job.stages[stage.position - 1].partitions)
        for task in spilling:
            task.mem_spill = int(read * task.weight * mem_x * rng.uniform(0.85, 1.15))
            task.disk_spill = int(read * task.weight * disk_x * rng.uniform(0.85, 1.15))
            task.slow = slow * rng.uniform(0.95, 1.05)
            task.peak = int(shape.memory_gb * GiB * 0.6 / max(1, shape.cores) * rng.uniform(0.9, 1.0))
        if variant == "executor_oom_killed":
            stage.kill_plan = {"count": params["executors_killed"], "oom": True}
        elif variant == "heap_oom_exceptions":
            count = max(2, int(round(params["heap_oom_task_share"] * len(stage.tasks))))
            for task in rng.sample(stage.tasks, count):
                cls, desc = EXCEPTIONS["oom"][0]
                task.failures[0] = ("exception", rng.uniform(0.6, 0.9), cls, desc)
    elif pid == "s3-write-slow":
        stage = next(s for s in stages_of(shape) if s.writes_output)
        stage.write_mib_s = params["mib_per_s_per_task"]
        for task in stage.tasks:
            task.fixed_ms = int(stage.output_per_task / MiB / stage.write_mib_s * 1000 * task.weight)
            task.cpu = params["cpu_share"] * rng.uniform(0.85, 1.15)
    elif pid == "low-parallelism":
        inject_low_parallelism(shape, variant, params, rng)
    elif pid == "task-failures":
        if variant in ("failed_job", "failed_operation"):
            if variant == "failed_job":
                job = shape.jobs[-1]
            else:
                op = shape.ops[len(shape.ops) // 2]
                op.fails = True
                job = op.jobs[-1]
            job.fails = True
            stage = job.stages[-1]
            task = stage.tasks[rng.randrange(len(stage.tasks))]
            cls, desc = rng.choice(EXCEPTIONS["fatal"])
            task.fatal = True
            for attempt in range(params["max_failures"]):
                task.failures[attempt] = ("exception", rng.uniform(0.2, 0.6), cls, desc)
        elif variant == "retried_exceptions":
            stage = role_stage(shape, "heavy_shuffle") or heaviest(stages_of(shape))
            count = max(params.get("min_failed_tasks", 1), int(round(params["failed_task_share"] * len(stage.tasks))))
            cls, desc = rng.choice(EXCEPTIONS["transient"])
            for task in rng.sample(stage.tasks, min(count, len(stage.tasks))):
                task.failures[0] = ("exception", rng.uniform(0.6, 1.0), cls, desc)
        elif variant == "fetch_failed_stage_retry":
            stage = role_stage(shape, "heavy_shuffle") or heaviest(stages_of(shape))
            stage.fetch_failed_plan = {"fraction": rng.uniform(0.3, 0.5)}
        elif variant == "speculative_kills":
            stage = heaviest([s for s in stages_of(shape) if s.partitions >= 2 * shape.slots] or stages_of(shape))
            stage.speculation_plan = {"count": params["speculative_killed_tasks"]}
            shape.speculation = True


def inject_low_parallelism(shape, variant, params, rng):
    """Too few tasks for the cores: the stage's data (or its long per-row work) goes through `tasks` tasks.
    Writers keep the healthy 8-12 MiB/s per task and their CPU share (this is not a slow write), shuffle
    stages process 12-25 MiB/s per task, a UDF's single task runs a multiple of the application's median
    task over little data."""
    if variant == "single_partition_udf":
        stage = role_stage(shape, "single")
        durations = sorted(t.duration_ms() for s in stages_of(shape) for t in s.tasks)
        median_ms = durations[len(durations) // 2]
        task_ms = params["udf_x_median"] * median_ms
        task_ms = max(task_ms, params.get("udf_min_s", 0) * 1000)
        task_ms = min(task_ms, params.get("udf_max_s", 1e9) * 1000)
        set_stage_bytes(stage, 1, int(rng.uniform(16, 48) * MiB))
        task = Task(0, 0, 1.0)
        task.fixed_ms = int(task_ms * rng.uniform(0.95, 1.05))
        task.cpu = rng.uniform(0.8, 0.95)
        stage.tasks = [task]
        return
    if "tasks" in params:
        count = params["tasks"]
    else:
        count = max(1, int(round(shape.slots * params["tasks_per_core"])))
    per_task = int(params["bytes_per_task_mib"] * MiB)
    if variant == "coalesced_write":
        stage = next(s for s in stages_of(shape) if s.writes_output)
        stage.output_per_task = per_task
        rate = stage.write_mib_s
    else:  # few_shuffle_partitions: spark.sql.shuffle.partitions set to the task count, AQE off
        stage = role_stage(shape, "heavy_shuffle")
        rate = rng.uniform(12, 25)
        shape.shuffle_partitions = count
        shape.adaptive = False
    set_stage_bytes(stage, count, per_task)
    tasks = []
    for partition in range(count):
        weight = math.exp(rng.gauss(0.0, 0.1))
        task = Task(partition, 0, weight)
        task.fixed_ms = int(per_task / MiB / rate * 1000 * weight)
        task.cpu = min(0.97, stage.cpu_share * rng.uniform(0.9, 1.1))
        task.gc = stage.gc_base
        task.fetch = stage.fetch_base
        task.peak = int(rng.uniform(64, 256) * MiB)
        tasks.append(task)
    stage.tasks = tasks


def set_stage_bytes(stage, partitions, per_task):
    """Gives a stage `partitions` partitions reading `per_task` bytes each, and keeps its neighbours' shuffle
    bytes consistent with it (its parent writes what it reads, its child reads what it writes)."""
    stage.partitions = partitions
    job = stage.job
    if stage.kind == "scan":
        stage.input_per_task = per_task
    else:
        stage.read_per_task = per_task
        parent = job.stages[stage.position - 1]
        parent.write_per_task = max(4096, per_task * partitions // max(1, parent.partitions))
    if stage.write_per_task and stage.position + 1 < len(job.stages):
        stage.write_per_task = max(4096, per_task // 2)
        child = job.stages[stage.position + 1]
        child.read_per_task = max(1024, stage.write_per_task * partitions // max(1, child.partitions))


# --------------------------------------------------------------------------------------------------------
# Scheduling


class Record:
    __slots__ = ("stage", "attempt_no", "position", "task", "executor", "slot", "start", "end", "outcome",
                 "detail", "speculative", "stage_attempt", "task_id", "first_on_executor")

    def __init__(self, stage, stage_attempt, position, task, attempt_no, executor, slot, start, end):
        self.stage = stage
        self.stage_attempt = stage_attempt
        self.position = position
        self.task = task
        self.attempt_no = attempt_no
        self.executor = executor
        self.slot = slot
        self.start = start
        self.end = end
        self.outcome = "success"
        self.detail = None
        self.speculative = False
        self.task_id = None
        self.first_on_executor = False


class StageAttempt:
    def __init__(self, stage, attempt, num_tasks, submit):
        self.stage = stage
        self.attempt = attempt
        self.num_tasks = num_tasks
        self.submit = submit
        self.complete = None
        self.failure = None
        self.records = []


class Simulation:
    def __init__(self, shape, rng):
        self.shape = shape
        self.rng = rng
        self.executors = []
        self.events = []
        self.stage_attempts = []
        self.next_exec = 1

    def add_executor(self, add_ms, request_ms):
        shape = self.shape
        exec_id = str(self.next_exec)
        self.next_exec += 1
        rng = self.rng
        if shape.platform == "kubernetes":
            host = f"10.{rng.randint(0, 3)}.{rng.randint(0, 255)}.{rng.randint(2, 254)}"
        elif shape.platform == "yarn":
            host = f"ip-10-0-{rng.randint(0, 255)}-{rng.randint(2, 254)}.ec2.internal"
        else:
            host = f"192.168.{rng.randint(0, 15)}.{rng.randint(2, 254)}"
        executor = Executor(len(self.executors), exec_id, host, shape.cores, add_ms, request_ms)
        self.executors.append(executor)
        return executor

    def alive_at(self, t):
        return [e for e in self.executors if e.add_ms <= t and (e.remove_ms is None or e.remove_ms > t)]


def schedule(sim, stage_attempt, items, slot_free=None, stop_at=None, max_failures=4):
    """Runs (position, task, first attempt number) items on the executors' cores from the stage attempt's
    submission on. Returns (records, slot_free, not launched items, abort time)."""
    rng = sim.rng
    submit = stage_attempt.submit
    slots = []
    for executor in sim.executors:
        if executor.remove_ms is not None and executor.remove_ms <= submit:
            continue
        for slot in range(executor.cores):
            free = max(submit, executor.add_ms, (slot_free or {}).get((executor.id, slot), 0))
            heapq.heappush(slots, (free, executor.order, slot, executor))
    pending = [(submit, position, attempt, task) for position, task, attempt in items]
    heapq.heapify(pending)
    records, unlaunched = [], []
    failures = {}
    abort_t = None
    seen_executors = set()
    while pending:
        if not slots:
            unlaunched.extend((p, t, a) for _, p, a, t in pending)
            break
        free, order, slot, executor = heapq.heappop(slots)
        if executor.remove_ms is not None and free >= executor.remove_ms:
            continue
        ready, position, attempt, task = heapq.heappop(pending)
        start = max(free, ready) + rng.randint(1, 12)
        if executor.remove_ms is not None and start >= executor.remove_ms:
            heapq.heappush(pending, (ready, position, attempt, task))
            continue
        if (stop_at is not None and start >= stop_at) or (abort_t is not None and start >= abort_t):
            unlaunched.append((position, task, attempt))
            heapq.heappush(slots, (free, order, slot, executor))
            if all(r >= (stop_at if stop_at is not None else abort_t) for r, *_ in pending):
                unlaunched.extend((p, t, a) for _, p, a, t in pending)
                pending = []
            continue
        duration = task.duration_ms()
        record = Record(stage_attempt.stage, stage_attempt, position, task, attempt, executor, slot, start,
                        start + duration)
        if executor.id not in seen_executors:
            record.first_on_executor = True
            seen_executors.add(executor.id)
        failure = task.failures.get(attempt)
        if failure:
            record.end = start + max(50, int(duration * failure[1]))
            record.outcome = "exception"
            record.detail = failure
        if executor.remove_ms is not None and record.end > executor.remove_ms:
            record.end = executor.remove_ms + rng.randint(5, 80)
            record.outcome = "executor_lost"
            record.detail = executor
        records.append(record)
        if record.outcome == "success":
            heapq.heappush(slots, (record.end + rng.randint(1, 5), order, slot, executor))
            continue
        if record.outcome == "exception":
            heapq.heappush(slots, (record.end + rng.randint(1, 5), order, slot, executor))
            failures[position] = failures.get(position, 0) + 1
            if failures[position] >= max_failures:
                abort_t = record.end if abort_t is None else min(abort_t, record.end)
                continue
            heapq.heappush(pending, (record.end + rng.randint(5, 40), position, attempt + 1, task))
        else:  # executor lost: the task is resubmitted once the driver hears of it
            heapq.heappush(pending, (executor.remove_ms + rng.randint(300, 1500), position, attempt + 1, task))
    if abort_t is not None:
        kept = []
        for record in records:
            if record.start >= abort_t:
                continue
            if record.end > abort_t and record.outcome == "success":
                record.end = abort_t + rng.randint(10, 120)
                record.outcome = "killed_abort"
            kept.append(record)
        records = kept
    free_out = dict(slot_free or {})
    for record in records:
        key = (record.executor.id, record.slot)
        free_out[key] = max(free_out.get(key, 0), record.end)
    return records, free_out, unlaunched, abort_t


def add_speculation(sim, stage_attempt, records, plan, median_ms):
    """Speculative copies of a few slow tasks of the last wave: one attempt of each pair is killed because
    the other succeeded (not a failure)."""
    rng = sim.rng
    last_on_slot = {}
    for record in records:
        key = (record.executor.id, record.slot)
        if key not in last_on_slot or record.start > last_on_slot[key].start:
            last_on_slot[key] = record
    candidates = sorted(last_on_slot.values(), key=lambda r: -r.start)[:max(plan["count"] * 3, 12)]
    rng.shuffle(candidates)
    done = 0
    for original in candidates:
        if done >= plan["count"]:
            break
        natural = original.end - original.start
        slow_end = original.start + 2 * natural
        copy_start = original.start + int(1.5 * median_ms) + 100
        if copy_start >= slow_end:
            continue
        free = [r for key, r in last_on_slot.items()
                if r.end + 50 <= copy_start and r.executor is not original.executor and r is not original]
        if not free:
            continue
        host = rng.choice(free)
        copy = Record(stage_attempt.stage, stage_attempt, original.position, original.task, original.attempt_no + 1,
                      host.executor, host.slot, copy_start, copy_start + natural)
        copy.speculative = True
        original.end = slow_end
        if copy.end < slow_end:
            original.end = copy.end + rng.randint(5, 60)
            original.outcome = "killed_speculation"
        else:
            copy.end = slow_end + rng.randint(5, 60)
            copy.outcome = "killed_speculation"
        last_on_slot[(host.executor.id, host.slot)] = copy
        records.append(copy)
        done += 1


# --------------------------------------------------------------------------------------------------------
# Running the application


def run_application(shape, timing):
    """Simulates the whole application; `timing` carries the time-level injections. Returns the Simulation."""
    rng = random.Random(shape.seed * 7919 + 17)
    sim = Simulation(shape, rng)
    t0 = T_BASE + (shape.seed % 997) * 86_400_000 + rng.randint(0, 80_000_000)
    sim.t0 = t0
    wait = timing.get("startup_wait_ms")
    first_exec = t0 + (wait if wait is not None else shape.startup_ms)
    extra_wait = timing.get("extra_startup_wait_ms", 0)
    first_exec += extra_wait
    if shape.allocation == "static":
        for _ in range(shape.executors):
            sim.add_executor(first_exec + rng.randint(0, 2500), t0 + rng.randint(200, 900))
        ramp = []
    else:
        initial = min(shape.executors, rng.randint(1, 3))
        for _ in range(initial):
            sim.add_executor(first_exec + rng.randint(0, 1500), t0 + rng.randint(200, 900))
        ramp = list(range(shape.executors - initial))
    sim.ramp_pending = ramp
    sim.first_exec = first_exec
    sim.jobs_run = []
    sim.sql_id = 0
    sim.next_stage_id = 0
    sim.next_job_id = 0
    sim.app_failed = False
    sim.connect_events = []
    sim.sql_events = []
    sim.job_events = []
    sim.exec_removed = []
    t = t0
    if shape.mode == "plain":
        for job in shape.jobs:
            gap = timing.get("gaps", {}).get(job.index)
            gap_start = t
            if job.index == 0:
                t += shape.first_job_ms
            else:
                t += gap if gap is not None else job.gap_before_ms
            if job.index in timing.get("midrun_wait", {}):
                t = dynamic_release_and_wait(sim, t, gap_start, timing["midrun_wait"][job.index])
            t = run_job(sim, job, t, timing)
            if job.fails:
                sim.app_failed = True
                break
        sim.app_end = t + rng.randint(500, 3000)
    else:
        t += shape.first_job_ms
        for op in shape.ops:
            if op.index > 0:
                gap = timing.get("gaps", {}).get(op.jobs[0].index)
                t += gap if gap is not None else op.gap_before_ms
            t = run_operation(sim, op, t, timing)
        sim.app_end = t + rng.randint(1000, 5000)
    return sim


def dynamic_release_and_wait(sim, submit, gap_start, params):
    """Dynamic allocation gave every executor back during the driver gap before the job submitted at `submit`
    (idle timeout 60 s); the job then waits for new ones."""
    rng = sim.rng
    for executor in sim.alive_at(gap_start):
        executor.remove_ms = gap_start + 60_000 + rng.randint(0, 1500)
        executor.remove_reason = "Executor killed by driver."
    first = submit + params["wait_ms"]
    for i in range(sim.shape.executors):
        sim.add_executor(first + i * rng.randint(200, 700), submit + rng.randint(900, 1200))
    return submit


def grow_dynamic(sim, submit):
    """Dynamic allocation: the backlog of the first job asks for the remaining executors, in growing rounds."""
    if not sim.ramp_pending:
        return
    rng = sim.rng
    base = max(submit, sim.first_exec) + 1000
    batch, added, round_no = 1, 0, 0
    while added < len(sim.ramp_pending):
        request = base + round_no * 1000
        for _ in range(min(batch, len(sim.ramp_pending) - added)):
            sim.add_executor(request + rng.randint(1500, 4500), request)
            added += 1
        batch *= 2
        round_no += 1
    sim.ramp_pending = []


def run_operation(sim, op, t, timing):
    rng = sim.rng
    start = t
    analyzed = start + rng.randint(20, 300)
    ready = analyzed + rng.randint(50, 800)
    op.start_ms, op.analyzed_ms, op.ready_ms = start, analyzed, ready
    t = ready + rng.randint(10, 100)
    sim.sql_id += 1
    op.sql_id = sim.sql_id - 1
    op.sql_start = t - rng.randint(2, 8)
    failed = False
    for k, job in enumerate(op.jobs):
        if k > 0:
            gap = timing.get("gaps", {}).get(job.index)
            t += gap if gap is not None else rng.randint(100, 1200)
        job.sql_id = op.sql_id
        t = run_job(sim, job, t, timing, own_sql=False)
        if job.fails:
            failed = True
            break
    op.sql_end = t + rng.randint(2, 20)
    op.failed = failed
    op.end_ms = op.sql_end + rng.randint(10, 150)
    op.closed_ms = op.end_ms + rng.randint(10, 400)
    op.gap_before_ms = op.gap_before_ms or 0
    return op.closed_ms


def stage_name(shape, stage):
    job = stage.job
    last = stage.position == len(job.stages) - 1
    if shape.mode == "connect":
        if stage.writes_output:
            return "save at SparkConnectPlanner.scala:3132"
        if last:
            return "collect at SparkConnectPlanExecution.scala:224"
        return "$anonfun$withThreadLocalCaptured$1 at FutureTask.java:264"
    # As in Spark SQL, every stage of a job carries the call site of the job's action.
    if job.kind == "write":
        return ["parquet at NativeMethodAccessorImpl.java:0", "save at NativeMethodAccessorImpl.java:0",
                "insertInto at NativeMethodAccessorImpl.java:0"][job.index % 3]
    if "single" in job.stages[-1].roles:
        return "collect at NativeMethodAccessorImpl.java:0"
    return rng_name(stage)


def rng_name(stage):
    return ["count at NativeMethodAccessorImpl.java:0", "collect at NativeMethodAccessorImpl.java:0",
            "toPandas at /opt/job/report.py:88", "showString at NativeMethodAccessorImpl.java:0"][stage.job.index % 4]


def run_job(sim, job, t, timing, own_sql=True):
    rng = sim.rng
    shape = sim.shape
    if own_sql:
        job.sql_id = sim.sql_id
        sim.sql_id += 1
        job.sql_start = t - rng.randint(2, 30)
    job.id = sim.next_job_id
    sim.next_job_id += 1
    for stage in job.stages:
        stage.id = sim.next_stage_id
        sim.next_stage_id += 1
        stage.name = stage_name(shape, stage)
        stage.parents = [job.stages[stage.position - 1].id] if stage.position > 0 else []
    job.submit = t
    if sim.ramp_pending:
        grow_dynamic(sim, t)
    t += rng.randint(5, 40)
    job.failed_message = None
    for stage in job.stages:
        t = run_stage(sim, job, stage, t, timing)
        if job.failed_message:
            break
    job.end = t + rng.randint(2, 20)
    if own_sql:
        job.sql_end = job.end + rng.randint(2, 30)
    sim.jobs_run.append(job)
    return job.end + (rng.randint(5, 60) if not job.stages[-1].writes_output else rng.randint(800, 3500))


def run_stage(sim, job, stage, t, timing):
    rng = sim.rng
    shape = sim.shape
    tasks = stage.tasks
    if "single" in stage.roles and timing.get("single_task_ms"):
        tasks[0].fixed_ms = timing["single_task_ms"]
    attempt = StageAttempt(stage, 0, len(tasks), t)
    sim.stage_attempts.append(attempt)
    alive = sim.alive_at(t) or sim.executors
    slots = max(1, sum(e.cores for e in alive))
    est = max(sum(tk.duration_ms() for tk in tasks) / slots, max(tk.duration_ms() for tk in tasks))
    if stage.kill_plan:
        candidates = [e for e in sim.alive_at(t)]
        victims = sim.rng.sample(candidates, min(stage.kill_plan["count"], max(1, len(candidates) - 1)))
        for victim in victims:
            victim.remove_ms = t + int(est * rng.uniform(0.3, 0.6))
            if shape.platform == "kubernetes":
                victim.remove_reason = (f"The executor with id {victim.id} exited with exit code 137(SIGKILL, "
                                        "possible container OOM).")
            else:
                memory = shape.memory_gb * 1.1
                victim.remove_reason = (f"Container killed by YARN for exceeding physical memory limits. "
                                        f"{memory + 0.3:.1f} GB of {memory:.1f} GB physical memory used. "
                                        "Consider boosting spark.executor.memoryOverhead.")
            victim.lost_by_app = True
            sim.add_executor(victim.remove_ms + rng.randint(20_000, 45_000), victim.remove_ms + rng.randint(500, 2000))
    items = [(i, task, 0) for i, task in enumerate(tasks)]
    if stage.fetch_failed_plan:
        return run_fetch_failed_stage(sim, job, stage, attempt, items, est, t)
    records, _, unlaunched, abort_t = schedule(sim, attempt, items)
    if stage.speculation_plan:
        median = sorted(r.end - r.start for r in records)[len(records) // 2]
        add_speculation(sim, attempt, records, stage.speculation_plan, median)
    attempt.records = records
    end = max(r.end for r in records)
    if abort_t is not None:
        fatal = [r for r in records if r.task.fatal]
        last = max(fatal, key=lambda r: r.end)
        cls, desc = last.detail[2], last.detail[3]
        message = (f"Job aborted due to stage failure: Task {last.position} in stage {stage.id}.0 failed 4 times, "
                   f"most recent failure: Lost task {last.position}.3 in stage {stage.id}.0 (TID {{tid}}) "
                   f"({last.executor.host} executor {last.executor.id}): {cls}: {desc}")
        attempt.failure = message
        attempt.abort_record = last
        job.failed_message = message
        end = max(end, abort_t)
    attempt.complete = end + rng.randint(5, 60)
    return attempt.complete + rng.randint(5, 40)


def run_fetch_failed_stage(sim, job, stage, attempt, items, est, t):
    """An executor is lost (no external shuffle service), the reduce stage hits FetchFailed, its map stage
    re-runs the lost map outputs and the reduce stage runs again for the partitions not done yet."""
    rng = sim.rng
    alive = sim.alive_at(t)
    victim = rng.choice(alive)
    kill = t + int(est * stage.fetch_failed_plan["fraction"])
    victim.remove_ms = kill
    victim.remove_reason = f"The executor with id {victim.id} was deleted by a user or the framework."
    victim.lost_by_app = False
    sim.add_executor(kill + rng.randint(15_000, 40_000), kill + rng.randint(500, 2000))
    fetch_fail_at = kill + rng.randint(1500, 6000)
    records, slot_free, unlaunched, _ = schedule(sim, attempt, items, stop_at=fetch_fail_at)
    running = [r for r in records if r.start < fetch_fail_at < r.end and r.outcome == "success"]
    parent = job.stages[stage.position - 1]
    parent_attempt = next(a for a in sim.stage_attempts if a.stage is parent and a.attempt == 0)
    lost_maps = sorted({r.task.partition for r in parent_attempt.records
                        if r.outcome == "success" and r.executor is victim})
    if not lost_maps:
        lost_maps = [parent_attempt.records[0].task.partition]
    failing = rng.sample(running, min(len(running), rng.randint(1, 3))) if running else []
    for k, record in enumerate(failing):
        record.end = fetch_fail_at + (0 if k == 0 else rng.randint(10, 900))
        record.outcome = "fetch_failed"
        record.detail = {"executor": victim, "shuffle": parent.shuffle_id, "map_index": lost_maps[0],
                         "map_id": lost_maps[0], "reduce": record.task.partition}
    attempt.records = records
    attempt.failure = (f"org.apache.spark.shuffle.FetchFailedException: Failed to connect to "
                       f"{victim.host}/{victim.host if victim.host[0].isdigit() else '10.0.0.1'}:7337\n"
                       "\tat org.apache.spark.errors.SparkCoreErrors$.fetchFailedError(SparkCoreErrors.scala:437)\n"
                       "\tat org.apache.spark.storage.ShuffleBlockFetcherIterator.throwFetchFailedException"
                       "(ShuffleBlockFetcherIterator.scala:1239)")
    attempt.complete = fetch_fail_at + rng.randint(2, 20)
    slot_free = {}
    for record in records:
        key = (record.executor.id, record.slot)
        slot_free[key] = max(slot_free.get(key, 0), record.end)
    # Map stage attempt 1: the lost map outputs.
    resubmit = attempt.complete + rng.randint(150, 1000)
    map_attempt = StageAttempt(parent, 1, len(lost_maps), resubmit)
    sim.stage_attempts.append(map_attempt)
    map_items = [(i, parent.tasks[p], 0) for i, p in enumerate(lost_maps)]
    map_records, slot_free, _, _ = schedule(sim, map_attempt, map_items, slot_free=slot_free)
    map_attempt.records = map_records
    map_attempt.complete = max(r.end for r in map_records) + rng.randint(5, 40)
    # Reduce stage attempt 1: what attempt 0 did not finish.
    done = {r.task.partition for r in records if r.outcome == "success"}
    todo = [task for task in stage.tasks if task.partition not in done]
    retry = StageAttempt(stage, 1, len(todo), map_attempt.complete + rng.randint(5, 40))
    sim.stage_attempts.append(retry)
    retry_items = [(i, task, 0) for i, task in enumerate(todo)]
    retry_records, _, _, _ = schedule(sim, retry, retry_items, slot_free=slot_free)
    retry.records = retry_records
    end = max([r.end for r in retry_records] + [r.end for r in records])
    retry.complete = end + rng.randint(5, 60)
    return retry.complete + rng.randint(5, 40)


def app_wall(sim):
    return sim.app_end - sim.t0


# --------------------------------------------------------------------------------------------------------
# Time-level injections (need the healthy application's wall time first)


def plan_timing(shape, problems, params_of, rng, healthy):
    """The gaps / waits that the injected problems add, sized from the healthy run's wall time."""
    timing = {"gaps": {}}
    wall = app_wall(healthy)
    for problem in problems:
        pid, variant = problem["id"], problem["variant"]
        params = params_of(problem)
        if pid == "resource-wait-long":
            if "wait_s" in params:
                timing["startup_wait_ms"] = int(params["wait_s"] * 1000)
                continue
            share, floor = params["wait_share"], params["min_wait_s"] * 1000
            if variant == "dynamic_midrun":
                index = rng.randrange(1, len(shape.jobs))
                gap = 75_000
                wait = max(floor, int(share * (wall + gap) / (1 - share)))
                timing.setdefault("midrun_wait", {})[index] = {"wait_ms": wait}
                timing["gaps"][index] = gap
            else:
                wait = max(floor, int(share * wall / (1 - share)))
                timing["startup_wait_ms"] = wait
        elif pid == "idle-executors":
            share = params["idle_share"]
            if variant == "single_task_tail":
                timing["single_task_ms"] = max(params.get("min_idle_s", 0) * 1000, int(share * wall / (1 - share)))
                continue
            gaps = candidate_gap_jobs(shape, variant)
            if "min_idle_s" not in params:  # near miss: spread ~share of the wall time over every gap
                total = int(share * wall / (1 - share))
                for index in gaps:
                    timing["gaps"][index] = max(timing["gaps"].get(index, 0), total // len(gaps))
                continue
            total = max(params["min_idle_s"] * 1000, int(share * wall / (1 - share)))
            chosen = gaps if len(gaps) <= 2 else rng.sample(gaps, 2)
            for index in chosen:
                timing["gaps"][index] = total // len(chosen)
    return timing


def candidate_gap_jobs(shape, variant):
    if shape.mode == "connect":
        indices = [op.jobs[k].index for op in shape.ops for k in range(1, len(op.jobs))]
        return indices or [op.jobs[0].index for op in shape.ops[1:]]
    return [job.index for job in shape.jobs[1:]]


def set_normal_gaps(shape, rng):
    for job in shape.jobs:
        job.gap_before_ms = rng.randint(300, 3000)
    for op in shape.ops:
        op.gap_before_ms = rng.randint(300, 3000)


# --------------------------------------------------------------------------------------------------------
# Events


class Writer:
    def __init__(self, sim):
        self.sim = sim
        self.items = []
        self.seq = 0

    def add(self, ts, priority, event):
        self.items.append((ts, priority, self.seq, event))
        self.seq += 1

    def lines(self):
        self.items.sort(key=lambda item: (item[0], item[1], item[2]))
        return [json.dumps(event, separators=(",", ":")) for _, _, _, event in self.items]


def version_tuple(version):
    return tuple(int(x) for x in version.split(".")[:2])


def app_identity(shape, t0, rng):
    if shape.platform == "kubernetes":
        app_id = "spark-" + "".join(rng.choice("0123456789abcdef") for _ in range(32))
    elif shape.platform == "yarn":
        app_id = f"application_{t0 - rng.randint(10**6, 10**8)}_{rng.randint(1, 9999):04d}"
    else:
        stamp = __import__("time").strftime("%Y%m%d%H%M%S", __import__("time").gmtime(t0 / 1000))
        app_id = f"app-{stamp}-{rng.randint(0, 9999):04d}"
    return app_id


def environment(shape, app_id, app_name):
    props = {
        "spark.app.name": app_name,
        "spark.app.id": app_id,
        "spark.executor.cores": str(shape.cores),
        "spark.executor.memory": f"{shape.memory_gb}g",
        "spark.driver.memory": "4g",
        "spark.eventLog.enabled": "true",
        "spark.eventLog.dir": "s3a://logs/spark-events",
        "spark.sql.shuffle.partitions": str(getattr(shape, "shuffle_partitions", 200)),
        "spark.sql.adaptive.enabled": str(shape.adaptive).lower(),
        "spark.serializer": "org.apache.spark.serializer.KryoSerializer",
        "spark.speculation": str(shape.speculation).lower(),
        "spark.submit.deployMode": "cluster" if shape.mode == "plain" else "client",
    }
    if shape.platform == "kubernetes":
        props["spark.master"] = "k8s://https://kubernetes.default.svc:443"
        props["spark.kubernetes.namespace"] = "spark-jobs"
        props["spark.kubernetes.container.image"] = f"registry.local/spark:{shape.version}"
    elif shape.platform == "yarn":
        props["spark.master"] = "yarn"
        props["spark.shuffle.service.enabled"] = "true"
    else:
        props["spark.master"] = "spark://spark-master:7077"
    if shape.allocation == "dynamic":
        props["spark.dynamicAllocation.enabled"] = "true"
        props["spark.dynamicAllocation.minExecutors"] = "0"
        props["spark.dynamicAllocation.maxExecutors"] = str(shape.executors)
        props["spark.dynamicAllocation.executorIdleTimeout"] = "60s"
        if shape.platform != "yarn":
            props["spark.dynamicAllocation.shuffleTracking.enabled"] = "true"
        if shape.shuffle_tracking_timeout:
            props["spark.dynamicAllocation.shuffleTracking.timeout"] = shape.shuffle_tracking_timeout
    else:
        props["spark.executor.instances"] = str(shape.executors)
        props["spark.dynamicAllocation.enabled"] = "false"
    if shape.committer != "file":
        props["spark.hadoop.fs.s3a.committer.name"] = shape.committer
        props["spark.sql.sources.commitProtocolClass"] = \
            "org.apache.spark.internal.io.cloud.PathOutputCommitProtocol"
        props["spark.sql.parquet.output.committer.class"] = \
            "org.apache.spark.internal.io.cloud.BindingParquetOutputCommitter"
    if shape.mode == "connect":
        props["spark.connect.grpc.binding.port"] = "15002"
        props["spark.plugins"] = ""
    if version_tuple(shape.version) >= (4, 0):
        props["spark.eventLog.includeTaskMetricsAccumulators"] = "false"
    hadoop = {"fs.s3a.impl": "org.apache.hadoop.fs.s3a.S3AFileSystem", "fs.s3a.fast.upload.buffer": "disk",
              "fs.s3a.multipart.size": "64M", "fs.s3a.connection.maximum": "96",
              "mapreduce.fileoutputcommitter.algorithm.version": "1"}
    if shape.committer != "file":
        hadoop["fs.s3a.committer.name"] = shape.committer
    java = "17.0.10 (Eclipse Adoptium)" if version_tuple(shape.version) >= (4, 0) else "11.0.22 (Eclipse Adoptium)"
    scala = "version 2.13.14" if version_tuple(shape.version) >= (4, 0) else "version 2.12.18"
    return {"Event": "SparkListenerEnvironmentUpdate",
            "JVM Information": {"Java Home": "/opt/java/openjdk", "Java Version": java, "Scala Version": scala},
            "Spark Properties": props, "Hadoop Properties": hadoop,
            "System Properties": {"java.io.tmpdir": "/tmp", "user.timezone": "UTC", "file.encoding": "UTF-8"},
            "Metrics Properties": {"*.sink.servlet.class": "org.apache.spark.metrics.sink.MetricsServlet",
                                   "*.sink.servlet.path": "/metrics/json"},
            "Classpath Entries": {f"/opt/spark/jars/spark-core_2.1{3 if version_tuple(shape.version) >= (4, 0) else 2}-"
                                  f"{shape.version}.jar": "System Classpath"}}


def executor_added(shape, executor):
    info = {"Host": executor.host, "Total Cores": executor.cores}
    if shape.platform == "yarn":
        container = f"container_{executor.order:06d}_01_{int(executor.id) + 1:06d}"
        info["Log Urls"] = {"stdout": f"http://{executor.host}:8042/node/containerlogs/{container}/hadoop/stdout?start=-4096",
                            "stderr": f"http://{executor.host}:8042/node/containerlogs/{container}/hadoop/stderr?start=-4096"}
        info["Attributes"] = {"NM_HTTP_ADDRESS": f"{executor.host}:8042", "USER": "hadoop", "LOG_FILES": "stderr,stdout",
                              "NM_HTTP_PORT": "8042", "CLUSTER_ID": "", "NM_PORT": "8041", "HTTP_SCHEME": "http://",
                              "NM_HOST": executor.host, "CONTAINER_ID": container}
    elif shape.platform == "standalone":
        info["Log Urls"] = {"stdout": f"http://{executor.host}:8081/logPage/?appId=x&executorId={executor.id}&logType=stdout",
                            "stderr": f"http://{executor.host}:8081/logPage/?appId=x&executorId={executor.id}&logType=stderr"}
        info["Attributes"] = {}
    else:
        info["Log Urls"] = {}
        info["Attributes"] = {}
    info["Resources"] = {}
    info["Resource Profile Id"] = 0
    info["Registration Time"] = executor.add_ms
    if version_tuple(shape.version) >= (3, 4) and shape.allocation == "dynamic":
        info["Request Time"] = executor.request_ms
    return {"Event": "SparkListenerExecutorAdded", "Timestamp": executor.add_ms, "Executor ID": executor.id,
            "Executor Info": info}


def rdd_info(stage, shape):
    return [{"RDD ID": stage.id * 3 + 2, "Name": "MapPartitionsRDD",
             "Scope": json.dumps({"id": str(stage.id * 3 + 1), "name": "WholeStageCodegen (1)"}, separators=(",", ":")),
             "Callsite": stage.name, "Parent IDs": [stage.id * 3 + 1],
             "Storage Level": {"Use Disk": False, "Use Memory": False, "Use Off Heap": False, "Deserialized": False,
                               "Replication": 1},
             "Barrier": False, "DeterministicLevel": "DETERMINATE", "Number of Partitions": stage.partitions,
             "Number of Cached Partitions": 0, "Memory Size": 0, "Disk Size": 0}]


def stage_info(shape, stage, attempt=0, num_tasks=None, submit=None, complete=None, failure=None, accumulables=None):
    info = {"Stage ID": stage.id, "Stage Attempt ID": attempt, "Stage Name": stage.name,
            "Number of Tasks": stage.partitions if num_tasks is None else num_tasks,
            "RDD Info": rdd_info(stage, shape), "Parent IDs": stage.parents,
            "Details": "org.apache.spark.sql.Dataset.collectToPython(Dataset.scala:4228)\n"
                       "java.base/jdk.internal.reflect.DirectMethodHandleAccessor.invoke(DirectMethodHandleAccessor.java:103)"}
    if submit is not None:
        info["Submission Time"] = submit
    if complete is not None:
        info["Completion Time"] = complete
    if failure is not None:
        info["Failure Reason"] = failure
    info["Accumulables"] = accumulables or []
    info["Resource Profile Id"] = 0
    info["Shuffle Push Enabled"] = False
    info["Shuffle Push Mergers Count"] = 0
    return info


def task_info(record, finished=True):
    failed = record.outcome in ("exception", "executor_lost", "fetch_failed")
    killed = record.outcome in ("killed_speculation", "killed_abort")
    return {"Task ID": record.task_id, "Index": record.position, "Attempt": record.attempt_no,
            "Partition ID": record.task.partition, "Launch Time": record.start, "Executor ID": record.executor.id,
            "Host": record.executor.host,
            "Locality": "PROCESS_LOCAL" if record.stage.kind == "reduce" else
            ("NODE_LOCAL" if record.executor.host.startswith("ip-") else "ANY"),
            "Speculative": record.speculative, "Getting Result Time": 0,
            "Finish Time": record.end if finished else 0, "Failed": failed and finished,
            "Killed": killed and finished, "Accumulables": []}


def task_metrics(shape, record, rng):
    """Task Metrics of an attempt that ran (successfully, killed or failed with an exception)."""
    stage, task = record.stage, record.task
    duration = record.end - record.start
    complete = record.outcome == "success"
    fraction = 1.0 if complete else max(0.05, min(1.0, duration / max(1, task.duration_ms())))
    deserialize = rng.randint(300, 1200) if record.first_on_executor else rng.randint(2, 60)
    deserialize = min(deserialize, max(1, duration // 4))
    overhead = rng.randint(2, 25)
    run = max(1, duration - deserialize - overhead)
    gc = int(run * task.gc)
    fetch = int(run * task.fetch)
    write_ms = run * task.write
    compute = max(1, run - gc - fetch - write_ms)
    cpu_ns = int(compute * task.cpu * 1_000_000)
    weight = task.weight
    read = int(stage.read_per_task * weight * fraction)
    executors = max(1, len(shape_alive_hint(shape)))
    local = read // executors
    parent_maps = getattr(stage, "parent_maps", 0)
    records_per_byte = 1 / 180.0
    written = int(stage.write_per_task * weight * fraction)
    output = int(stage.output_per_task * weight * fraction) if stage.writes_output else 0
    input_bytes = int(stage.input_per_task * (1.0 if stage.kind == "scan" else 0) * rng.uniform(0.97, 1.0) * fraction)
    metrics = {"Executor Deserialize Time": deserialize,
               "Executor Deserialize CPU Time": int(deserialize * rng.uniform(0.5, 0.9) * 1_000_000),
               "Executor Run Time": run, "Executor CPU Time": cpu_ns,
               "Peak Execution Memory": task.peak if complete else int(task.peak * fraction)}
    if version_tuple(shape.version) >= (4, 0):
        metrics["Peak On Heap Execution Memory"] = metrics["Peak Execution Memory"]
        metrics["Peak Off Heap Execution Memory"] = 0
    metrics.update({
        "Result Size": stage.result_bytes if complete else 0,
        "JVM GC Time": gc, "Result Serialization Time": rng.randint(0, 3) if complete else 0,
        "Memory Bytes Spilled": int(task.mem_spill * fraction), "Disk Bytes Spilled": int(task.disk_spill * fraction),
        "Shuffle Read Metrics": {
            "Remote Blocks Fetched": int(parent_maps * (1 - 1 / executors)) if read else 0,
            "Local Blocks Fetched": int(parent_maps / executors) if read else 0,
            "Fetch Wait Time": fetch, "Remote Bytes Read": read - local if read else 0,
            "Remote Bytes Read To Disk": 0, "Local Bytes Read": local if read else 0,
            "Total Records Read": int(read * records_per_byte),
            "Remote Requests Duration": int(fetch * 1.1 + (read / (200 * MiB)) * 1000) if read else 0,
            "Push Based Shuffle": {"Corrupt Merged Block Chunks": 0, "Merged Fetch Fallback Count": 0,
                                   "Merged Remote Blocks Fetched": 0, "Merged Local Blocks Fetched": 0,
                                   "Merged Remote Chunks Fetched": 0, "Merged Local Chunks Fetched": 0,
                                   "Merged Remote Bytes Read": 0, "Merged Local Bytes Read": 0,
                                   "Merged Remote Requests Duration": 0}},
        "Shuffle Write Metrics": {"Shuffle Bytes Written": written, "Shuffle Write Time": int(write_ms * 1_000_000),
                                  "Shuffle Records Written": int(written * records_per_byte)},
        "Input Metrics": {"Bytes Read": input_bytes, "Records Read": int(input_bytes / 120)},
        "Output Metrics": {"Bytes Written": output, "Records Written": int(output / 90)},
        "Updated Blocks": []})
    return metrics


def shape_alive_hint(shape):
    return range(getattr(shape, "alive_hint", shape.executors))


def executor_metrics(shape, record, rng, gc_ms):
    executor = record.executor
    executor.gc_total += gc_ms
    executor.gc_count += max(1, gc_ms // 40)
    heap = int(shape.memory_gb * GiB * rng.uniform(0.3, 0.85))
    metrics = {"JVMHeapMemory": heap, "JVMOffHeapMemory": int(rng.uniform(80, 200) * MiB),
               "OnHeapExecutionMemory": record.task.peak, "OffHeapExecutionMemory": 0,
               "OnHeapStorageMemory": int(rng.uniform(0, 64) * MiB), "OffHeapStorageMemory": 0,
               "OnHeapUnifiedMemory": record.task.peak, "OffHeapUnifiedMemory": 0,
               "DirectPoolMemory": int(rng.uniform(1, 40) * MiB), "MappedPoolMemory": 0,
               "ProcessTreeJVMVMemory": 0, "ProcessTreeJVMRSSMemory": 0, "ProcessTreePythonVMemory": 0,
               "ProcessTreePythonRSSMemory": 0, "ProcessTreeOtherVMemory": 0, "ProcessTreeOtherRSSMemory": 0,
               "MinorGCCount": executor.gc_count, "MinorGCTime": int(executor.gc_total * 0.7),
               "MajorGCCount": executor.gc_count // 20, "MajorGCTime": executor.gc_total - int(executor.gc_total * 0.7),
               "TotalGCTime": executor.gc_total}
    if version_tuple(shape.version) >= (4, 0):
        metrics["ConcurrentGCCount"] = 0
        metrics["ConcurrentGCTime"] = 0
    return metrics


def lost_executor_metrics():
    return {"JVMHeapMemory": -1, "JVMOffHeapMemory": 0, "OnHeapExecutionMemory": 0, "OffHeapExecutionMemory": 0,
            "OnHeapStorageMemory": 0, "OffHeapStorageMemory": 0, "OnHeapUnifiedMemory": 0, "OffHeapUnifiedMemory": 0,
            "DirectPoolMemory": 0, "MappedPoolMemory": 0, "ProcessTreeJVMVMemory": 0, "ProcessTreeJVMRSSMemory": 0,
            "ProcessTreePythonVMemory": 0, "ProcessTreePythonRSSMemory": 0, "ProcessTreeOtherVMemory": 0,
            "ProcessTreeOtherRSSMemory": 0, "MinorGCCount": 0, "MinorGCTime": 0, "MajorGCCount": 0, "MajorGCTime": 0}


STACK = [{"Declaring Class": "org.apache.spark.sql.execution.WholeStageCodegenExec", "Method Name": "$anonfun$doExecute$4",
          "File Name": "WholeStageCodegenExec.scala", "Line Number": 760},
         {"Declaring Class": "org.apache.spark.scheduler.ResultTask", "Method Name": "runTask",
          "File Name": "ResultTask.scala", "Line Number": 93},
         {"Declaring Class": "org.apache.spark.executor.Executor$TaskRunner", "Method Name": "run",
          "File Name": "Executor.scala", "Line Number": 620}]


def end_reason(record):
    if record.outcome == "success":
        return {"Reason": "Success"}
    if record.outcome == "exception":
        _, _, cls, desc = record.detail
        return {"Reason": "ExceptionFailure", "Class Name": cls, "Description": desc, "Stack Trace": STACK,
                "Full Stack Trace": f"{cls}: {desc}\n\tat org.apache.spark.sql.execution.WholeStageCodegenExec"
                                    f".$anonfun$doExecute$4(WholeStageCodegenExec.scala:760)\n",
                "Accumulator Updates": []}
    if record.outcome == "executor_lost":
        executor = record.detail
        return {"Reason": "ExecutorLostFailure", "Executor ID": executor.id,
                "Exit Caused By App": getattr(executor, "lost_by_app", True), "Loss Reason": executor.remove_reason}
    if record.outcome == "fetch_failed":
        detail = record.detail
        executor = detail["executor"]
        return {"Reason": "FetchFailed",
                "Block Manager Address": {"Executor ID": executor.id, "Host": executor.host, "Port": 7337},
                "Shuffle ID": detail["shuffle"], "Map ID": detail["map_id"], "Map Index": detail["map_index"],
                "Reduce ID": detail["reduce"],
                "Message": f"org.apache.spark.shuffle.FetchFailedException: Failed to connect to {executor.host}:7337"}
    if record.outcome == "killed_speculation":
        return {"Reason": "TaskKilled", "Kill Reason": "another attempt succeeded", "Accumulator Updates": []}
    if record.outcome == "killed_abort":
        return {"Reason": "TaskKilled", "Kill Reason": "Stage cancelled: Job aborted due to stage failure",
                "Accumulator Updates": []}
    raise ValueError(record.outcome)


ACCUMULABLE_METRICS = [("internal.metrics.executorRunTime", "Executor Run Time"),
                       ("internal.metrics.executorCpuTime", "Executor CPU Time"),
                       ("internal.metrics.jvmGCTime", "JVM GC Time"),
                       ("internal.metrics.resultSize", "Result Size"),
                       ("internal.metrics.memoryBytesSpilled", "Memory Bytes Spilled"),
                       ("internal.metrics.diskBytesSpilled", "Disk Bytes Spilled"),
                       ("internal.metrics.peakExecutionMemory", "Peak Execution Memory")]


def emit(sim, case, app_name):
    shape = sim.shape
    rng = random.Random(shape.seed * 104_729 + 3)
    version = shape.version
    v = version_tuple(version)
    writer = Writer(sim)
    t0 = sim.t0
    app_id = app_identity(shape, t0, rng)
    writer.add(t0 - 400, 0, {"Event": "SparkListenerLogStart", "Spark Version": version})
    writer.add(t0 - 390, 0, {"Event": "SparkListenerResourceProfileAdded", "Resource Profile Id": 0,
                             "Executor Resource Requests": {
                                 "cores": {"Resource Name": "cores", "Amount": shape.cores, "Discovery Script": "",
                                           "Vendor": ""},
                                 "memory": {"Resource Name": "memory", "Amount": shape.memory_gb * 1024,
                                            "Discovery Script": "", "Vendor": ""},
                                 "offHeap": {"Resource Name": "offHeap", "Amount": 0, "Discovery Script": "",
                                             "Vendor": ""}},
                             "Task Resource Requests": {"cpus": {"Resource Name": "cpus", "Amount": 1.0}}})
    writer.add(t0 - 380, 0, {"Event": "SparkListenerBlockManagerAdded",
                             "Block Manager ID": {"Executor ID": "driver", "Host": "driver-svc", "Port": 7079},
                             "Maximum Memory": 2_390_753_280, "Timestamp": t0 - 380,
                             "Maximum Onheap Memory": 2_390_753_280, "Maximum Offheap Memory": 0})
    writer.add(t0 - 300, 0, environment(shape, app_id, app_name))
    start = {"Event": "SparkListenerApplicationStart", "App Name": app_name, "App ID": app_id, "Timestamp": t0,
             "User": "spark"}
    if shape.platform == "yarn":
        start["App Attempt ID"] = "1"
    start["Driver Logs"] = {}
    writer.add(t0, 0, start)
    shape.alive_hint = shape.executors
    # Executors.
    for executor in sim.executors:
        writer.add(executor.add_ms, 1, executor_added(shape, executor))
        writer.add(executor.add_ms, 1, {"Event": "SparkListenerBlockManagerAdded",
                                        "Block Manager ID": {"Executor ID": executor.id, "Host": executor.host,
                                                             "Port": 40000 + int(executor.id)},
                                        "Maximum Memory": int(shape.memory_gb * GiB * 0.55),
                                        "Timestamp": executor.add_ms,
                                        "Maximum Onheap Memory": int(shape.memory_gb * GiB * 0.55),
                                        "Maximum Offheap Memory": 0})
        if executor.remove_ms is not None and executor.remove_ms < sim.app_end:
            writer.add(executor.remove_ms, 7, {"Event": "SparkListenerExecutorRemoved", "Timestamp": executor.remove_ms,
                                               "Executor ID": executor.id, "Removed Reason": executor.remove_reason})
            writer.add(executor.remove_ms + 1, 7, {"Event": "SparkListenerBlockManagerRemoved",
                                                   "Block Manager ID": {"Executor ID": executor.id,
                                                                        "Host": executor.host,
                                                                        "Port": 40000 + int(executor.id)},
                                                   "Timestamp": executor.remove_ms + 1})
    # Task ids in launch order.
    all_records = [r for a in sim.stage_attempts for r in a.records]
    all_records.sort(key=lambda r: (r.start, r.stage.id, r.position))
    for tid, record in enumerate(all_records):
        record.task_id = tid
    # Jobs, stages, tasks.
    for job in sim.jobs_run:
        op = job.op
        tags = None
        properties = {"spark.rdd.scope": json.dumps({"id": str(job.id * 7 + 1), "name": "collect"},
                                                    separators=(",", ":")),
                      "spark.rdd.scope.noOverride": "true",
                      "spark.sql.execution.id": str(job.sql_id),
                      "spark.job.description": job_description(shape, job),
                      "callSite.short": job.stages[-1].name}
        if v >= (3, 4):
            properties["spark.sql.execution.root.id"] = str(job.sql_id)
        if op is not None:
            tags = operation_tag(shape, op)
            properties["spark.job.tags"] = tags
            properties["spark.job.interruptOnCancel"] = "true"
            properties["callSite.long"] = properties["spark.job.description"]
        infos = [stage_info(shape, stage) for stage in job.stages]
        writer.add(job.submit, 3, {"Event": "SparkListenerJobStart", "Job ID": job.id, "Submission Time": job.submit,
                                   "Stage Infos": infos, "Stage IDs": [s.id for s in job.stages],
                                   "Properties": properties})
        for stage in job.stages:
            stage.parent_maps = 0
            if stage.position > 0:
                stage.parent_maps = job.stages[stage.position - 1].partitions
        if op is None:
            writer.add(job.sql_start, 2, sql_start(shape, job.sql_id, job, None, job.sql_start))
            end = {"Event": "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionEnd",
                   "executionId": job.sql_id, "time": job.sql_end}
            if job.failed_message:
                end["errorMessage"] = job.failed_message.replace("{tid}", "0")
            writer.add(job.sql_end, 10, end)
        result = {"Result": "JobSucceeded"}
        if job.failed_message:
            result = {"Result": "JobFailed", "Exception": {"Message": job.failed_message.replace(
                "{tid}", str(abort_tid(sim, job))), "Stack Trace": []}}
        writer.add(job.end, 9, {"Event": "SparkListenerJobEnd", "Job ID": job.id, "Completion Time": job.end,
                                "Job Result": result})
    for attempt in sim.stage_attempts:
        stage = attempt.stage
        props = {"spark.sql.execution.id": str(stage.job.sql_id), "callSite.short": stage.name,
                 "resource.executor.cores": str(shape.cores)}
        if stage.job.op is not None:
            props["spark.job.tags"] = operation_tag(shape, stage.job.op)
        writer.add(attempt.submit, 4, {"Event": "SparkListenerStageSubmitted",
                                       "Stage Info": stage_info(shape, stage, attempt.attempt, attempt.num_tasks,
                                                                attempt.submit),
                                       "Properties": props})
        totals = {}
        for record in sorted(attempt.records, key=lambda r: r.task_id):
            writer.add(record.start, 5, {"Event": "SparkListenerTaskStart", "Stage ID": stage.id,
                                         "Stage Attempt ID": attempt.attempt,
                                         "Task Info": task_info(record, finished=False)})
            event = {"Event": "SparkListenerTaskEnd", "Stage ID": stage.id, "Stage Attempt ID": attempt.attempt,
                     "Task Type": "ResultTask" if stage.position == len(stage.job.stages) - 1 else "ShuffleMapTask",
                     "Task End Reason": end_reason(record), "Task Info": task_info(record)}
            if record.outcome in ("executor_lost", "fetch_failed"):
                event["Task Executor Metrics"] = lost_executor_metrics()
            else:
                metrics = task_metrics(shape, record, rng)
                event["Task Executor Metrics"] = executor_metrics(shape, record, rng, metrics["JVM GC Time"])
                event["Task Metrics"] = metrics
                if record.outcome == "success":
                    for name, key in ACCUMULABLE_METRICS:
                        totals[name] = totals.get(name, 0) + metrics[key]
                    if v < (4, 0):
                        event["Task Info"]["Accumulables"] = [
                            {"ID": stage.id * 100 + k, "Name": name, "Update": metrics[key],
                             "Value": totals[name], "Internal": True, "Count Failed Values": True}
                            for k, (name, key) in enumerate(ACCUMULABLE_METRICS[:3])]
            writer.add(record.end, 6, event)
        accumulables = [{"ID": stage.id * 100 + k, "Name": name, "Value": totals.get(name, 0), "Internal": True,
                         "Count Failed Values": True} for k, (name, _) in enumerate(ACCUMULABLE_METRICS)]
        failure = attempt.failure
        if failure and "{tid}" in failure:
            failure = failure.replace("{tid}", str(attempt.abort_record.task_id))
        writer.add(attempt.complete, 8, {"Event": "SparkListenerStageCompleted",
                                         "Stage Info": stage_info(shape, stage, attempt.attempt, attempt.num_tasks,
                                                                  attempt.submit, attempt.complete, failure,
                                                                  accumulables)})
    # Spark Connect operations.
    for op in shape.ops:
        if not hasattr(op, "start_ms"):
            continue
        tag = operation_tag(shape, op)
        prefix = "org.apache.spark.sql.connect.service.SparkListenerConnectOperation"
        writer.add(op.start_ms, 11, {"Event": prefix + "Started", "jobTag": tag, "operationId": op.id,
                                     "eventTime": op.start_ms, "sessionId": op.session, "userId": op.user,
                                     "userName": op.user, "statementText": statement_text(op),
                                     "sparkSessionTags": [], "extraTags": {}})
        writer.add(op.analyzed_ms, 11, {"Event": prefix + "Analyzed", "jobTag": tag, "operationId": op.id,
                                        "eventTime": op.analyzed_ms, "extraTags": {}})
        writer.add(op.ready_ms, 11, {"Event": prefix + "ReadyForExecution", "jobTag": tag, "operationId": op.id,
                                     "eventTime": op.ready_ms, "extraTags": {}})
        job = op.jobs[0]
        start = sql_start(shape, op.sql_id, job, tag, op.sql_start)
        writer.add(op.sql_start, 2, start)
        end = {"Event": "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionEnd", "executionId": op.sql_id,
               "time": op.sql_end}
        if op.failed:
            failed_job = next(j for j in op.jobs if j.failed_message)
            message = failed_job.failed_message.replace("{tid}", str(abort_tid(sim, failed_job)))
            end["errorMessage"] = message
            writer.add(op.sql_end, 10, end)
            writer.add(op.end_ms, 12, {"Event": prefix + "Failed", "jobTag": tag, "operationId": op.id,
                                       "eventTime": op.end_ms, "errorMessage": message, "extraTags": {}})
        else:
            writer.add(op.sql_end, 10, end)
            writer.add(op.end_ms, 12, {"Event": prefix + "Finished", "jobTag": tag, "operationId": op.id,
                                       "eventTime": op.end_ms,
                                       "producedRowCount": None if op.kind == "write" else rng.randint(1, 50000),
                                       "extraTags": {}})
        writer.add(op.closed_ms, 13, {"Event": prefix + "Closed", "jobTag": tag, "operationId": op.id,
                                      "eventTime": op.closed_ms, "extraTags": {}})
    sessions = {}
    for op in shape.ops:
        sessions.setdefault((op.user, op.session), op.start_ms if hasattr(op, "start_ms") else t0)
    for (user, session), first in sessions.items():
        writer.add(first - rng.randint(50, 500), 11,
                   {"Event": "org.apache.spark.sql.connect.service.SparkListenerConnectSessionStarted",
                    "sessionId": session, "userId": user, "eventTime": first - 50, "extraTags": {}})
    end = {"Event": "SparkListenerApplicationEnd", "Timestamp": sim.app_end}
    if v >= (4, 0):
        end["ExitCode"] = 1 if sim.app_failed else 0
    writer.add(sim.app_end, 20, end)
    return app_id, writer.lines()


def abort_tid(sim, job):
    for attempt in sim.stage_attempts:
        if attempt.stage.job is job and getattr(attempt, "abort_record", None) is not None:
            return attempt.abort_record.task_id
    return 0


def operation_tag(shape, op):
    if shape.version in ("3.5.0", "3.5.1"):  # SPARK-47921: user and session swapped
        return f"SparkConnect_OperationTag_User_{op.session}_Session_{op.user}_Operation_{op.id}"
    return f"SparkConnect_OperationTag_User_{op.user}_Session_{op.session}_Operation_{op.id}"


def statement_text(op):
    if op.kind == "write":
        return ("write_operation {\n  input {\n    common {\n      plan_id: 7\n    }\n    read {\n      data_source {\n"
                "        format: \"parquet\"\n        paths: \"s3a://lake/raw/events/\"\n      }\n    }\n  }\n"
                "  source: \"parquet\"\n  path: \"s3a://lake/curated/events/\"\n  mode: SAVE_MODE_OVERWRITE\n}\n")
    return ("root {\n  common {\n    plan_id: 12\n  }\n  aggregate {\n    input {\n      read {\n        named_table {\n"
            "          unparsed_identifier: \"sales.orders\"\n        }\n      }\n    }\n    group_type: GROUP_TYPE_GROUPBY\n"
            "  }\n}\n")


def job_description(shape, job):
    if job.op is not None:
        return "Spark Connect - " + statement_text(job.op).replace("\n", " ")[:112]
    return job.stages[-1].name


def sql_start(shape, sql_id, job, tag, time_ms):
    v = version_tuple(shape.version)
    description = job_description(shape, job)
    event = {"Event": "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart", "executionId": sql_id}
    if v >= (3, 4):
        event["rootExecutionId"] = sql_id
    event.update({"description": description, "details": description,
                  "physicalPlanDescription": "== Physical Plan ==\nAdaptiveSparkPlan (12)\n",
                  "sparkPlanInfo": {"nodeName": "AdaptiveSparkPlan", "simpleString": "AdaptiveSparkPlan isFinalPlan=true",
                                    "children": [], "metadata": {}, "metrics": []},
                  "time": time_ms, "modifiedConfigs": {}})
    if v >= (3, 5):
        event["jobTags"] = [tag] if tag else []
    if v >= (4, 0):
        event["jobGroupId"] = None
    return event


# --------------------------------------------------------------------------------------------------------
# Cases


def build_case(case, doc):
    """Returns (application id, log lines) of one case."""
    shape = build_shape(case["seed"], case["shape"])
    rng = random.Random(case["seed"] * 15_485_863 + 11)
    set_normal_gaps(shape, random.Random(case["seed"] * 613 + 5))
    make_tasks(shape)
    params = doc["strength_params"]

    def params_of(problem):
        return params[problem["id"]][problem["strength"]]

    for problem in case["problems"]:
        inject_task_level(shape, problem, params_of(problem), rng)
    # A healthy run of the same tasks gives the wall time that relative waits and gaps are sized from.
    healthy = run_application_clean(shape)
    timing = plan_timing(shape, case["problems"], params_of, rng, healthy)
    sim = run_application(shape, timing)
    name = "Spark Connect server" if shape.mode == "connect" else f"nightly_{['orders', 'events', 'billing', 'sessions'][case['seed'] % 4]}_etl"
    return emit(sim, case, name)


def run_application_clean(shape):
    """The same shape and tasks with no time-level injection and no failures (for sizing)."""
    saved = []
    for stage in stages_of(shape):
        saved.append((stage, stage.kill_plan, stage.fetch_failed_plan, stage.speculation_plan))
        stage.kill_plan = stage.fetch_failed_plan = stage.speculation_plan = None
    fails = [(job, job.fails) for job in shape.jobs]
    task_state = [(task, task.failures, task.fatal) for stage in stages_of(shape) for task in stage.tasks]
    for job in shape.jobs:
        job.fails = False
    for task, _, _ in task_state:
        task.failures, task.fatal = {}, False
    sim = run_application(shape, {"gaps": {}})
    for stage, kill, fetch, spec in saved:
        stage.kill_plan, stage.fetch_failed_plan, stage.speculation_plan = kill, fetch, spec
    for job, value in fails:
        job.fails = value
    for task, failures, fatal in task_state:
        task.failures, task.fatal = failures, fatal
    return sim


def file_name_for(app_id):
    name = re.sub(r"[ :/]", "-", app_id)
    name = re.sub(r"[.${}'\"]", "_", name)
    return name.lower()


def generate_case(case, out_dir, doc):
    """Writes one case's log under out_dir/<case>/ and returns its path."""
    app_id, lines = build_case(case, doc)
    directory = os.path.join(out_dir, case_directory_name(case))
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, file_name_for(app_id))
    with open(path, "w") as handle:
        handle.write("\n".join(lines))
        handle.write("\n")
    return path


def labels_of(case):
    label = {"name": case["name"], "kind": case["kind"], "seed": case["seed"], "expected": case["expected"],
             "allowed": case["allowed"]}
    if case.get("near_miss"):
        label["near_miss"] = case["near_miss"]
    if case.get("twin_of"):
        label["twin_of"] = case["twin_of"]
    return label


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir", required=True)
    parser.add_argument("--seeds", default=SEEDS_FILE)
    parser.add_argument("--only", default="", help="only the cases whose name contains this text")
    parser.add_argument("--labels", default="", help="write the labels (JSON) here instead of stdout")
    args = parser.parse_args()
    doc = load_seeds(args.seeds)
    labels = []
    for case in doc["cases"]:
        if args.only and args.only not in case["name"]:
            continue
        label = labels_of(case)
        label["path"] = generate_case(case, args.out_dir, doc)
        labels.append(label)
    text = json.dumps(labels, indent=1)
    if args.labels:
        with open(args.labels, "w") as handle:
            handle.write(text + "\n")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
