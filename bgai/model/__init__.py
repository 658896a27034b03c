"""Models layer: input encodings, value networks, position classes, the bear-off database, model bundles
(safe save/load) and export. torch is needed only to build, train or load torch networks."""
