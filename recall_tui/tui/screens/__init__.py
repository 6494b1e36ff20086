"""The screens: the main screen (`main.py`), dialogs (`dialogs.py`) and the editing
screens (`edit.py`: recall_when editor, judge, save preset, conflict view).
"""
