#!/usr/bin/env python3
"""Quix Streams join_asof on a real broker: activity joined with weather, to an output topic.

    quix_asof.py BROKERS ACTIVITY_TOPIC WEATHER_TOPIC OUT_TOPIC COUNT STATE_DIR

Both input topics are keyed by station (join_asof joins on the message key) and carry the
event time as their Kafka timestamp; the app stops after COUNT joined outputs (one per
activity). how="left" keeps activities without weather, like ss-asof's default.
"""
import sys
import uuid

from quixstreams import Application

brokers, activity_topic, weather_topic, out_topic, count, state_dir = sys.argv[1:7]


def merge(activity, weather):
    weather = weather or {}
    return {**activity, "w_timestamp": weather.get("timestamp"),
            "w_value": weather.get("value"), "temp": weather.get("temp")}


app = Application(broker_address=brokers, consumer_group="bench-" + uuid.uuid4().hex,
                  auto_offset_reset="earliest", state_dir=state_dir,
                  processing_guarantee="at-least-once", loglevel="WARNING")
activity = app.dataframe(app.topic(activity_topic, key_deserializer="str",
                                   value_deserializer="json"))
weather = app.dataframe(app.topic(weather_topic, key_deserializer="str",
                                  value_deserializer="json"))
joined = activity.join_asof(weather, how="left", on_merge=merge)
joined.to_topic(app.topic(out_topic, value_serializer="json"))
app.run(count=int(count), timeout=60, collect=False)
