"""English understanding as one component: a request (or a session message) becomes a typed `Analysis`.

- `encoder`: the packaged MiniLM, read once per text: one vector per word piece and one for the text;
- `descriptions`: the words a goal or an argument of a pack is known by (what the learned heads compare to);
- `heads`: the learned parts (which goal a text asks for, which span is which argument's value), small
  heads on the encoder's vectors, trained on SGD train by `nesyplan train-language`;
- `sgd_corpus`: their training examples, read from SGD train and its re-worded (SGD-X) schemas;
- `readers`: one value reader per normaliser type, in one table (`READERS`), with `names`, `phrases` and
  `words` (the English word lists of `lexicon/`): what words can be read as per argument;
- `readings`, `values`: those readings, and which the slot head keeps;
- `linking`: the heads applied to one pack.

The Analysis itself is a record (`records.Analysis`), assembled by translate. May import packs, values,
records and settings; the grammar and retrieval import it.
"""
