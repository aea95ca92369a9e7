"""Each page's parameter changed in JupyterLab: pages 1, 2, 4 and 5 in English and pages 3
and 6 to 9 in Chinese (the others in ``test_lab_parameters_b.py``; see ``tests/helpers/lab_pages.py``:
two files, so that their JupyterLab sessions run on both cores)."""

from lab_pages import chinese_page_test, lab, page_test

lab_server = lab.lab_server
pytestmark = lab.pytestmark
test_each_page_follows_its_parameter = page_test("01", "02", "04", "05")
test_the_chinese_page_follows_its_parameter = chinese_page_test("03", "06", "07", "08", "09")
