import pytest

from pipeline.pack import load_pack


@pytest.fixture(scope="session")
def pack():
    return load_pack("quickbooks")
