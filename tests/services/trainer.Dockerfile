# The test trainer image: the mmdebstrap base (python3 + numpy) plus the test trainer script.
ARG BASE
FROM ${BASE}
COPY trainer.py /src/trainer.py
WORKDIR /src
