"""Main program of a Spark driver that only serves Spark Connect, for cluster deploy mode.

spark-submit refuses `--deploy-mode cluster` for org.apache.spark.sql.connect.service.SparkConnectServer
("Cluster deploy mode is not applicable to Spark Connect server"), and the Spark operator's
SparkApplication always submits in cluster mode. So the driver runs this program instead, with
spark.plugins=org.apache.spark.sql.connect.SparkConnectPlugin: the plugin starts the Spark Connect
gRPC server (on spark.connect.grpc.binding.port) when the SparkContext starts, and stops it with the
SparkContext. The program only keeps the driver alive until the pod is stopped.
"""

import threading

from pyspark.sql import SparkSession

spark = SparkSession.builder.getOrCreate()
threading.Event().wait()
