"""The key/value states of several requests decoded together: one row per request, each row compact from
column 0 (its prompt, then what it wrote), so that rows of different lengths share one forward pass without
padding between them. The model's attention layers write into the rows through `update` (the one method of
transformers' cache they call when handed a ready-made 4D mask), and a step's mask says which columns each
row's tokens may read.

Two ways to run a step, by device:
- packed (CPU): every row's tokens in one sequence, so the matrix work has no padding at all, and attention
  computed row by row against the row's own columns (a registered transformers attention function);
- padded (CUDA): rows padded to one length with a mask, the rows and columns allocated once, and each shape
  of step captured as a CUDA graph, so a step is one graph launch instead of hundreds of kernel launches.
"""

from __future__ import annotations

from dataclasses import dataclass

# Steps are rounded up to these sizes on CUDA, so that a few captured graphs serve every shape.
ROW_BUCKETS = (1, 2, 4, 8, 16, 32, 64)
TOKEN_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256)
COLUMN_QUANTUM = 256  # the width grows in these steps on CPU (no reallocation per token)
GRAPH_MIN_WIDTH = 1024  # the narrowest graphed width (most prompts fit in it, with room to write)


def bucket(n: int, sizes: tuple[int, ...]) -> int | None:
    return next((size for size in sizes if size >= n), None)


@dataclass
class Step:
    """One forward pass over rows [0, n): each row's tokens and the row's length before the step (where
    its first token goes)."""
    tokens: list[list[int]]
    lengths: list[int]
    longest: int = 0  # the longest row in use, in the step or not (graphed steps write past the others)

    @property
    def n(self) -> int:
        return len(self.tokens)

    @property
    def k(self) -> int:
        return max(len(t) for t in self.tokens)


class SlotCache:
    """Per layer, keys and values of shape [rows, kv_heads, columns, head_dim]."""

    def __init__(self, config, dtype, device: str, rows: int, columns: int):
        import torch

        self.layers = config.num_hidden_layers
        self.kv_heads = getattr(config, "num_key_value_heads", None) or config.num_attention_heads
        self.head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
        self.dtype, self.device = dtype, device
        self.keys: list = []
        self.values: list = []
        self.rows = self.columns = 0
        self.generation = 0  # bumped at every reallocation (captured graphs hold the old addresses)
        self._torch = torch
        self.reserve(rows, columns)
        self.bind(slice(0, 0), None, None, 0)

    def reserve(self, rows: int, columns: int) -> None:
        """At least this many rows and columns, keeping what the rows hold."""
        if rows <= self.rows and columns <= self.columns:
            return
        torch = self._torch
        rows, columns = max(rows, self.rows), max(columns, self.columns)
        shape = (rows, self.kv_heads, columns, self.head_dim)
        keys = [torch.zeros(shape, dtype=self.dtype, device=self.device) for _ in range(self.layers)]
        values = [torch.zeros(shape, dtype=self.dtype, device=self.device) for _ in range(self.layers)]
        for old, new in zip(self.keys + self.values, keys + values):
            new[:old.shape[0], :, :old.shape[2]].copy_(old)
        self.keys, self.values = keys, values
        self.rows, self.columns = rows, columns
        self.generation += 1

    def load(self, row: int, state) -> int:
        """Copy a prompt prefix's states (a transformers cache of batch 1) into columns [0, P) of a row."""
        length = _layer_states(state, 0)[0].shape[-2]
        self.reserve(row + 1, -(-(length + 1) // COLUMN_QUANTUM) * COLUMN_QUANTUM)
        for layer in range(self.layers):
            keys, values = _layer_states(state, layer)
            self.keys[layer][row, :, :length].copy_(keys[0])
            self.values[layer][row, :, :length].copy_(values[0])
        return length

    def move(self, source: int, target: int, length: int) -> None:
        """Row `source`'s first `length` columns into row `target` (a finished row's place is filled by the
        last row, so that the rows in use stay [0, n))."""
        for tensor in self.keys + self.values:
            tensor[target, :, :length].copy_(tensor[source, :, :length])

    def bind(self, rows: slice, write_rows, write_columns, width: int) -> None:
        """What the next forward pass reads and writes: rows, the (row, column) of each of its tokens, and
        how many columns attention reads."""
        self._rows, self._write_rows, self._write_columns, self._width = rows, write_rows, write_columns, width

    # --- what the model's attention layers call --------------------------------------------------
    def update(self, key_states, value_states, layer_idx: int, *args, **kwargs):
        """Write the step's keys and values (batch [rows, heads, k, dim], or packed [1, heads, tokens, dim]
        with one (row, column) per token) and return what attention reads."""
        keys, values = self.keys[layer_idx], self.values[layer_idx]
        if self._write_rows.dim() == 1:  # packed
            keys[self._write_rows, :, self._write_columns] = key_states[0].transpose(0, 1).to(keys.dtype)
            values[self._write_rows, :, self._write_columns] = value_states[0].transpose(0, 1).to(values.dtype)
        else:
            keys[self._write_rows, :, self._write_columns] = key_states.transpose(1, 2).to(keys.dtype)
            values[self._write_rows, :, self._write_columns] = value_states.transpose(1, 2).to(values.dtype)
        return keys[self._rows, :, :self._width], values[self._rows, :, :self._width]

    def get_seq_length(self, layer_idx: int = 0) -> int:
        return self._width


@dataclass
class Layout:
    """Where a packed step's tokens go in attention. Rows of few tokens (a decoded token and what the grammar
    forced after it) share one grid [rows, k], padded to the longest of them; a row of many (a new prompt)
    is computed alone, so that its length never pads the others'."""
    k: int
    grid_rows: object        # [rows in the grid] long (rows of the step), or None for all of them
    grid_tokens: object      # [their tokens] long: positions in the packed sequence
    cells: object            # [their tokens] long: row-in-grid * k + position in the row's tokens
    bias: object             # [grid rows, 1, k, width] float32: 0 where a cell reads a column, else -inf
    long_rows: list          # (row of the step, first packed token, count, bias [1, 1, count, length + count])


LONG_ROW = 16  # tokens past which a row's attention is computed on its own
ROWS_ATTENTION = "nesyplan_rows"


def _attend(queries, key, value, bias, scale: float):
    """Attention of queries [rows, heads, q, dim] over key/value [rows, kv_heads, width, dim] with an additive
    bias [rows, 1, q, width]. The query heads that share a key head read it in one product (SDPA's CPU
    kernels are slow at these small shapes, bfloat16 above all); softmax in float32."""
    import torch

    rows, heads, q, dim = queries.shape
    kv_heads = key.shape[1]
    groups = heads // kv_heads
    grouped = queries.reshape(rows, kv_heads, groups * q, dim)
    scores = torch.matmul(grouped, key.transpose(-1, -2)).float() * scale
    scores = (scores.view(rows, kv_heads, groups, q, -1) + bias[:, :, None]).view(rows, kv_heads, groups * q, -1)
    out = torch.matmul(torch.softmax(scores, dim=-1).to(value.dtype), value)
    return out.view(rows, heads, q, dim)


def rows_attention(module, query, key, value, attention_mask, dropout: float = 0.0, scaling=None, **kwargs):
    """Attention for a packed step (`slot_layout` given): each row's queries read that row's own columns.
    Any other call is plain SDPA attention (prompt prefixes go through transformers' cache)."""
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    layout: Layout | None = kwargs.get("slot_layout")
    if layout is None:
        return sdpa_attention_forward(module, query, key, value, attention_mask, dropout=dropout, scaling=scaling,
                                      **kwargs)
    heads, dim = query.shape[1], query.shape[3]
    scale = scaling or dim ** -0.5
    packed = query[0].transpose(0, 1)                                   # [tokens, heads, dim]
    out = packed.new_empty(packed.shape)
    if layout.grid_tokens is not None:
        rows = layout.bias.shape[0]
        grid = packed.new_zeros((rows * layout.k, heads, dim))
        grid[layout.cells] = packed[layout.grid_tokens]
        grid = grid.view(rows, layout.k, heads, dim).transpose(1, 2)    # [rows, heads, k, dim]
        keys, values = ((key, value) if layout.grid_rows is None else
                        (key.index_select(0, layout.grid_rows), value.index_select(0, layout.grid_rows)))
        result = _attend(grid, keys, values, layout.bias, scale)
        out[layout.grid_tokens] = result.transpose(1, 2).reshape(rows * layout.k, heads, dim)[layout.cells]
    for row, start, count, bias in layout.long_rows:
        width = bias.shape[-1]
        queries = packed[start:start + count].transpose(0, 1)[None]     # [1, heads, count, dim]
        result = _attend(queries, key[row:row + 1, :, :width], value[row:row + 1, :, :width], bias, scale)
        out[start:start + count] = result[0].transpose(0, 1)
    return out[None], None


def use_rows_attention(model) -> None:
    """Point the model at `rows_attention` (registered once under its name, with SDPA's mask)."""
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

    AttentionInterface.register(ROWS_ATTENTION, rows_attention)
    AttentionMaskInterface.register(ROWS_ATTENTION, sdpa_mask)
    model.config._attn_implementation = ROWS_ATTENTION


def _bias(lengths: list[int], counts: list[int], k: int, width: int, device):
    """[rows, 1, k, width]: cell (i, j) reads row i's columns up to its own (length + j); a padding cell
    (j >= count) reads column 0 only (its output is dropped)."""
    import torch

    lengths_t = torch.tensor(lengths, device=device)[:, None]
    positions = torch.arange(k, device=device)[None, :]
    reach = torch.where(positions < torch.tensor(counts, device=device)[:, None], lengths_t + positions, 0)
    readable = torch.arange(width, device=device)[None, None, :] <= reach[:, :, None]
    return torch.zeros(readable.shape, device=device).masked_fill_(~readable, float("-inf"))[:, None]


def _layer_states(state, layer: int):
    if hasattr(state, "layers"):
        return state.layers[layer].keys, state.layers[layer].values
    return state[layer][0], state[layer][1]  # the legacy tuple form


def slots_supported(model) -> str | None:
    """Why this model cannot be decoded in rows (None when it can): every layer must attend to all earlier
    tokens, since a row's mask here is plain causal (a sliding window would need its own)."""
    config = model.config
    kinds = set(getattr(config, "layer_types", None) or ["full_attention"])
    if kinds != {"full_attention"}:
        return f"its layers are {sorted(kinds)} (sliding-window attention needs its own mask)"
    if not hasattr(model, "lm_head") or not hasattr(model, "model"):
        return "it has no separate decoder and output head"
    return None


class StepRunner:
    """Runs steps over a SlotCache: builds each row's positions and mask, runs the decoder, and returns the
    logits of each row's last real token only (the output head is by far the widest matrix: computing it for
    every prompt token would cost more than the rest of the request's prompt)."""

    def __init__(self, model, cache: SlotCache, packed: bool, graphs: bool):
        import torch

        self.model, self.cache, self.torch = model, cache, torch
        self.decoder, self.head = model.model, model.lm_head
        self.packed = packed  # CPU: no padding (needs `use_rows_attention`)
        self.graphs = graphs  # CUDA: fixed widths and captured graphs
        self._captured: dict[tuple, tuple] = {}
        self._generation = cache.generation
        self.graph_error: str | None = None

    def run(self, step: Step):
        """Logits [n, vocab] (float32) of each row's last real token."""
        needed = max(length + len(tokens) for length, tokens in zip(step.lengths, step.tokens))
        if self.graphs and self.graph_error is None:
            try:
                return self._run_graphed(step, needed)
            except Exception as exc:  # noqa: BLE001 - a step that cannot be captured still runs eagerly
                self.graph_error = f"{type(exc).__name__}: {exc}"[:300]
                self._captured.clear()
        width = -(-needed // COLUMN_QUANTUM) * COLUMN_QUANTUM
        self.cache.reserve(step.n, width)
        if self.packed:
            return self._run_packed(step).float()
        tokens, counts, lengths = self._tensors(step, step.n, step.k, pad_length=0)
        return self._forward(step.n, tokens, counts, lengths, needed).float()

    def _run_packed(self, step: Step):
        torch = self.torch
        device = self.cache.device
        counts = [len(t) for t in step.tokens]
        starts = [sum(counts[:i]) for i in range(len(counts))]
        tokens = [token for row_tokens in step.tokens for token in row_tokens]
        rows = torch.tensor([i for i, count in enumerate(counts) for _ in range(count)], device=device)
        columns = torch.tensor([length + j for length, count in zip(step.lengths, counts) for j in range(count)],
                               device=device)
        width = max(length + count for length, count in zip(step.lengths, counts))
        self.cache.bind(slice(0, step.n), rows, columns, width)
        no_mask = torch.zeros((1, 1, 1, 1), dtype=self.cache.dtype, device=device)  # the layout is the mask
        ends = torch.tensor(counts, device=device).cumsum(0) - 1
        with torch.no_grad():
            hidden = self.decoder(input_ids=torch.tensor([tokens], device=device), attention_mask=no_mask,
                                  position_ids=columns[None], past_key_values=self.cache, use_cache=True,
                                  slot_layout=self._layout(step, counts, starts, width)).last_hidden_state
            return self.head(hidden[0, ends])

    def _layout(self, step: Step, counts: list[int], starts: list[int], width: int) -> Layout:
        torch = self.torch
        device = self.cache.device
        short = [i for i, count in enumerate(counts) if count <= LONG_ROW]
        long_rows = []
        for i, count in enumerate(counts):
            if count > LONG_ROW:
                length = step.lengths[i]
                long_rows.append((i, starts[i], count, _bias([length], [count], count, length + count, device)))
        if not short:
            return Layout(0, None, None, None, None, long_rows)
        k = max(counts[i] for i in short)
        grid_tokens = torch.tensor([starts[i] + j for i in short for j in range(counts[i])], device=device)
        cells = torch.tensor([n * k + j for n, i in enumerate(short) for j in range(counts[i])], device=device)
        grid_rows = None if len(short) == len(counts) else torch.tensor(short, device=device)
        bias = _bias([step.lengths[i] for i in short], [counts[i] for i in short], k, width, device)
        return Layout(k, grid_rows, grid_tokens, cells, bias, long_rows)

    def _tensors(self, step: Step, rows: int, k: int, pad_length: int):
        torch = self.torch
        tokens = torch.zeros((rows, k), dtype=torch.long)
        counts = torch.ones(rows, dtype=torch.long)
        lengths = torch.full((rows,), pad_length, dtype=torch.long)
        for i, (row_tokens, length) in enumerate(zip(step.tokens, step.lengths)):
            tokens[i, :len(row_tokens)] = torch.tensor(row_tokens)
            counts[i], lengths[i] = len(row_tokens), length
        device = self.cache.device
        return tokens.to(device), counts.to(device), lengths.to(device)

    def _forward(self, rows: int, tokens, counts, lengths, width: int):
        """The decoder over rows [0, rows) with the given inputs (device tensors); shapes only depend
        on (rows, k, width), so that a capture of it replays for any values."""
        torch = self.torch
        k = tokens.shape[1]
        columns = lengths[:, None] + torch.arange(k, device=tokens.device)[None, :]  # [rows, k]
        readable = torch.arange(width, device=tokens.device)[None, None, :] <= columns[:, :, None]
        mask = torch.zeros(readable.shape, dtype=self.cache.dtype, device=tokens.device)
        mask = mask.masked_fill(~readable, torch.finfo(self.cache.dtype).min)[:, None]  # [rows, 1, k, width]
        write_rows = torch.arange(rows, device=tokens.device)[:, None]
        self.cache.bind(slice(0, rows), write_rows, columns, width)
        with torch.no_grad():
            hidden = self.decoder(input_ids=tokens, attention_mask=mask, position_ids=columns,
                                  past_key_values=self.cache, use_cache=True).last_hidden_state
            last = hidden[torch.arange(rows, device=tokens.device), counts - 1]
            return self.head(last)

    # --- CUDA graphs -----------------------------------------------------------------------------
    def _run_graphed(self, step: Step, needed: int):
        """Rows [0, R) and k rounded up to a bucket, the width to a power of two; one graph per (R, k, width).
        Rows past the step's own (R > n) write into the last k columns of the width, past every row's data,
        and their outputs are dropped."""
        rows, k = bucket(step.n, ROW_BUCKETS), bucket(step.k, TOKEN_BUCKETS)
        if rows is None or k is None:
            raise ValueError(f"a step of {step.n} rows and {step.k} tokens has no captured shape")
        width = max(GRAPH_MIN_WIDTH, 1 << (max(needed, step.longest) + TOKEN_BUCKETS[-1] - 1).bit_length())
        if width > self.cache.columns or rows > self.cache.rows:
            self.cache.reserve(max(rows, self.cache.rows), max(width, self.cache.columns))
        key = (rows, k, width)
        if self._generation != self.cache.generation:  # new tensors: the graphs read the old ones
            self._captured.clear()
            self._generation = self.cache.generation
        if key not in self._captured:
            self._captured[key] = self._capture(rows, k, width)
        graph, tokens, counts, lengths, out = self._captured[key]
        new_tokens, new_counts, new_lengths = self._tensors(step, rows, k, pad_length=width - k)
        tokens.copy_(new_tokens)
        counts.copy_(new_counts)
        lengths.copy_(new_lengths)
        graph.replay()
        return out[:step.n].float()

    def _capture(self, rows: int, k: int, width: int):
        """One step's graph, each with its own memory pool (a pool shared between graphs that are later
        dropped trips the allocator's own checks)."""
        torch = self.torch
        device = self.cache.device
        tokens = torch.zeros((rows, k), dtype=torch.long, device=device)
        counts = torch.ones(rows, dtype=torch.long, device=device)
        lengths = torch.full((rows,), width - k, dtype=torch.long, device=device)
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for _ in range(2):
                self._forward(rows, tokens, counts, lengths, width)
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            out = self._forward(rows, tokens, counts, lengths, width)
        return graph, tokens, counts, lengths, out
