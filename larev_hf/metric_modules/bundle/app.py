import os
from pathlib import Path

import evaluate
from evaluate.utils import launch_gradio_widget

# The widget scores with the evaluator bundle named by LAREV_EVALUATOR (a bundle directory or a Hub repo id).
module = evaluate.load(str(Path(__file__).with_name("bundle.py")), evaluator=os.environ["LAREV_EVALUATOR"])
launch_gradio_widget(module)
