"""The argument tagger: examples read from SGD-format turns, a training run on a small corpus of our own
(the real MiniLM, real adapters), and the trained tagger read back and used by a pack's linker."""

import numpy as np
import pytest

from pipeline.language.sgd_corpus import read_turns, read_wordings
from pipeline.language.tagger import BEGIN, INSIDE, TAGGER, ArgumentTagger, Tagged, span_probability
from pipeline.language.train_tagger import fit_argument_tagger, tagger_examples
from pipeline.packs.sgd_schema import load_schema
from tests.language.test_heads import CORPUS, SCHEMA


def _examples():
    services = {s.service_name: s for s in load_schema(SCHEMA)}
    return tagger_examples(read_turns(iter(CORPUS), services), read_wordings([SCHEMA]))


def test_examples_tag_written_values_and_take_no_argument_given_without_its_words_as_a_negative():
    examples = _examples()
    positives = [e for e in examples if e.spans]
    assert {e.text[a:b] for e in positives for a, b in e.spans} >= {"Tacoma", "two", "Furry Cuts", "Monday"}
    for e in examples:
        if not e.spans:  # a negative: the turn gives that argument nothing it writes
            name = e.argument.split(":")[0]
            assert not any(p.text == e.text and p.argument.split(":")[0] == name for p in positives)


def test_a_span_is_likely_only_when_it_is_one_whole_run_of_tags():
    tags = np.full((5, 3), 0.05)
    tags[:, 0] = 0.9
    tags[1] = [0.05, 0.9, 0.05]
    tags[2] = [0.05, 0.05, 0.9]
    assert span_probability(tags, np.array([1, 2])) > 0.8
    assert span_probability(tags, np.array([1])) < 0.5  # cut short: the next piece is inside it
    assert span_probability(tags, np.array([2, 3])) < 0.5  # starts inside
    assert span_probability(tags, np.array([], int)) == 0.0
    tagged = Tagged("at Oak Room now", ["place"], tags[None, :4], np.array([[0, 2], [3, 6], [7, 11], [12, 15]]))
    assert tagged.runs() == [(3, 11, pytest.approx(span_probability(tags, np.array([1, 2]))))]


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tagger")
    examples = _examples()
    report = fit_argument_tagger(examples, examples[:8], folder, epochs=20, batch=16, learning_rate=5e-3)
    return folder, report


def test_training_writes_adapters_that_learn_where_the_values_are(trained):
    folder, report = trained
    assert (folder / TAGGER).is_file() and report.examples == len(_examples())
    assert report.held_out["piece_accuracy"] > 0.9  # measured on examples it learned from: it fits them
    tagger = ArgumentTagger(folder / TAGGER)
    city, salon = "city: City where the salon is", "salon name: Name of the grooming salon"
    text = "I want to get my two dogs groomed in Tacoma"
    tagged = tagger.tag(text, [city, salon])
    at = text.index("Tacoma")
    assert tagged.tags.shape[:2] == (2, len(tagged.offsets))
    assert tagged.probability(0, at, at + 6) > 0.5 > tagged.probability(0, 0, 6)
    assert tagged.tags[0, np.flatnonzero(tagged.offsets[:, 0] == at)[0]].argmax() in (BEGIN, INSIDE)


def test_a_pack_linker_reads_values_with_the_tagger_where_one_is_trained(trained, monkeypatch, tmp_path):
    from pipeline.authoring.sgd_packs import import_services
    from pipeline.language.heads import reload
    from pipeline.language.linking import linker_for
    from pipeline.packs.pack import load_pack, using_packs_root
    from pipeline.settings import settings

    folder, _report = trained
    monkeypatch.setenv("NESYPLAN_LANGUAGE_WEIGHTS", str(folder))
    settings.cache_clear()
    reload()
    try:
        made = import_services(SCHEMA, tmp_path, ["Grooming_1"])
        with using_packs_root(tmp_path):
            pack = load_pack(next(iter(made)))
            linker = linker_for(pack)
            assert linker.tagger is not None
            text = "I want to get my two dogs groomed in Tacoma"
            at = text.index("Tacoma")
            p_city = linker.value_probabilities(text, [(at, at + 6)], "city")[0]
            assert p_city > 0.5 > linker.value_probabilities(text, [(0, 6)], "city")[0]
            assert (at, at + 6) in {(p.start, p.end) for p in linker.proposals(text)}
            # A text is read against the arguments asked for only, and reading one alone or in the whole
            # batch gives the same probabilities.
            other = "Groomed near Tacoma today"
            alone = linker.tagged(other, ["city"])
            assert alone.arguments == ["city"]
            whole = linker.tagged(other)
            assert sorted(whole.arguments) == sorted(linker.arguments) and whole.tags.shape[0] == len(linker.arguments)
            k = whole.arguments.index("city")
            near = other.index("Tacoma")
            assert abs(whole.probability(k, near, near + 6) - alone.probability(0, near, near + 6)) < 1e-4
    finally:
        monkeypatch.delenv("NESYPLAN_LANGUAGE_WEIGHTS")
        settings.cache_clear()
        reload()


def test_a_tagger_adapted_on_every_layer_is_read_back_with_every_adapter(tmp_path):
    """Training on a GPU adapts every layer, on a CPU the top ones: the weights file says which, and the
    tagger read back merges each adapter into its own layer (none dropped for a layer not expected)."""
    import torch
    from transformers import AutoModel

    from pipeline.language.encoder import packaged_embedding_model
    from pipeline.language.tagger import EVERY_LAYER, TOP_LAYERS, adapted_layers

    examples = _examples()[:16]
    base = AutoModel.from_pretrained(packaged_embedding_model(), dtype=torch.float32)
    for layers, name in ((EVERY_LAYER, "every"), (TOP_LAYERS, "top")):
        folder = tmp_path / name
        fit_argument_tagger(examples, examples[:4], folder, epochs=1, batch=8, learning_rate=5e-2, layers=layers)
        assert adapted_layers(folder / TAGGER) == layers
        merged = ArgumentTagger(folder / TAGGER).model.encoder
        changed = {k for k in range(6) if not torch.equal(merged.encoder.layer[k].attention.self.query.weight,
                                                           base.encoder.layer[k].attention.self.query.weight)}
        assert changed == set(layers)


def test_a_text_longer_than_the_pieces_it_was_trained_on_is_read_whole_not_refused():
    """A request holding three uuids fills more than MAX_PIECES alone: it is read whole (the argument's
    words are what is cut), so a linker never fails on a long request."""
    from pipeline.language.tagger import MAX_PIECES, encode_pairs, tokenizer

    text = "start customer c71d9e42-0a5b-4c3d-8e6f-7a8b9c0d1e2f on plan 2a4c6e8f-1b3d-4f5a-9c7e-0d2f4a6c8e0b " * 3
    tok = tokenizer()
    pieces = len(tok(text, add_special_tokens=False)["input_ids"])
    assert pieces > MAX_PIECES
    enc, offsets, text_side = encode_pairs(tok, ["customer id: the customer to start", "plan"], [text, "a plan"])
    assert int(text_side[0].sum()) == pieces and offsets[0][text_side[0]][-1][1] == len(text.rstrip())
