"""Acoustic descriptors a careful listener uses: band limits, room (reverberation and echo), clipping, stereo
pan over time, pitch modulation, per-word loudness, a silence map, tempo trend, short sounds next to speech
and spelled-out letters.

Each descriptor is an ordinary tool (a function, a `ToolArgs` model, a `ToolOutput` model and a manifest in
`tools/`). What it measures is named, with the words listeners use for its values, in the property
vocabulary `lexicon/properties.toml`; `audiomind.reasoning.property_facts` reads the outputs and
`audiomind.reasoning.property_verifier` maps answer choices onto them (docs/DESCRIPTORS.md)."""
