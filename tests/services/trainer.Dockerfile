# The test trainer image: the mmdebstrap base (python3 + numpy) plus the test trainer script and
# the hostile job (tests/runners/fixtures).
ARG BASE
FROM ${BASE}
COPY trainer.py hostile_job.py /src/
WORKDIR /src
