"""Four ways a task talks to Spark Connect through sparktrace; the plugin covers all four.

Connection ``spark_connect_default``: type Spark Connect, host ``sparktrace`` (the proxy's
Service), port 15002. Nothing in the tasks mentions sparktrace: the plugin's listener adds the
task's identity and trace context to every Spark Connect call. ``explicit_remote`` shows the
``sparktrace_remote`` macro for deployments without the plugin's listener; ``child_process`` a
script the task starts, which continues the task's trace from the environment the listener exported
(``TRACEPARENT``) with one import.
"""

from __future__ import annotations

from datetime import datetime

try:  # Airflow 3
    from airflow.providers.standard.operators.bash import BashOperator
    from airflow.sdk import DAG, task
except ImportError:  # Airflow 2.10 / 2.11
    from airflow import DAG
    from airflow.decorators import task
    from airflow.operators.bash import BashOperator

from airflow.providers.apache.spark.operators.spark_pyspark import PySparkOperator

with DAG(
    dag_id="sparktrace_pyspark_examples",
    start_date=datetime(2025, 1, 1),
    schedule=None,
    catchup=False,
    tags=["sparktrace", "example"],
):

    @task.pyspark(conn_id="spark_connect_default")
    def decorated(spark, sc):
        """@task.pyspark: the provider builds the session from the connection."""
        return spark.range(1_000_000).selectExpr("sum(id) AS total").collect()[0]["total"]

    def count_rows(spark):
        return spark.range(10_000).filter("id % 7 = 0").count()

    operator = PySparkOperator(
        task_id="operator",
        python_callable=count_rows,
        conn_id="spark_connect_default",
    )

    # Without the listener (or to see the URL): the macro puts the identity into spark.remote.
    # config_kwargs is templated on PySparkOperator only.
    explicit_remote = PySparkOperator(
        task_id="explicit_remote",
        python_callable=count_rows,
        conn_id="spark_connect_default",
        config_kwargs={
            "spark.remote": "{{ macros.sparktrace.sparktrace_remote('spark_connect_default', ti) }}",
        },
    )

    @task
    def plain_session():
        """User code: SparkSession.builder.remote(...) with any sc:// URL."""
        from pyspark.sql import SparkSession

        spark = SparkSession.builder.remote("sc://sparktrace:15002/;user_id=etl").getOrCreate()
        try:
            spark.sql("SELECT 1").collect()
        finally:
            spark.stop()

    # A child process: BashOperator (no env=) passes os.environ on, TRACEPARENT included; the
    # script's one import makes its calls carry the task's identity and span. (This task process
    # itself makes no Spark Connect call: its attempt is reported only with [sparktrace] report = all.)
    child_process = BashOperator(
        task_id="child_process",
        bash_command=(
            "python3 -c 'import sparktrace_airflow.environment\n"
            "from pyspark.sql import SparkSession\n"
            "SparkSession.builder.remote(\"sc://sparktrace:15002\").getOrCreate().range(10).count()'"
        ),
    )

    decorated() >> operator >> explicit_remote >> plain_session() >> child_process
