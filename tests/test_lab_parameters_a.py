"""Each page's parameter changed in JupyterLab: pages 1, 2, 4 and 5 (the others, and page
1's Chinese edition, in ``test_lab_parameters_b.py``; see ``tests/helpers/lab_pages.py``)."""

from lab_pages import lab, page_test

lab_server = lab.lab_server
pytestmark = lab.pytestmark
test_each_page_follows_its_parameter = page_test("01", "02", "04", "05")
