//! Talking to the running kernel: installing filters and observing its decisions.
