"""A stand-in for a simulation library that asks a question at import time (as LIBERO does when its
config/dataset directory is not set). Used by tests of probe_sim_import.py; never imported by pytest."""
print("importing fake_prompt_sim")
answer = input("Do you want to specify a custom path for the dataset folder? (Y/N): ")
print("answer was %r" % answer)
