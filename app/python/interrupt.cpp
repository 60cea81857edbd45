#include "interrupt.h"

namespace ql::py {

Interruptible::Interruptible()
    : m_owner(std::this_thread::get_id())
    , m_lastCheck(std::chrono::steady_clock::now()) {}

Interruptible::~Interruptible() {
    // Only ever set, and destroyed, with the GIL held (the object lives in a bound function's frame).
    Py_XDECREF(m_type);
    Py_XDECREF(m_value);
    Py_XDECREF(m_traceback);
}

ProgressFn Interruptible::callback() {
    return [this](double) { return check(); };
}

bool Interruptible::check() {
    if (m_cancelled.load(std::memory_order_relaxed)) return false;
    if (std::this_thread::get_id() != m_owner) return true;
    // Taking the GIL waits for any other Python thread's turn (up to its switch interval): not per chunk.
    const auto now = std::chrono::steady_clock::now();
    if (now - m_lastCheck < std::chrono::milliseconds(50)) return true;
    m_lastCheck = now;
    pybind11::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() == 0) return true;
    PyErr_Fetch(&m_type, &m_value, &m_traceback);
    m_cancelled = true;
    return false;
}

void Interruptible::raisePending() {
    if (!m_type) return;
    PyErr_Restore(m_type, m_value, m_traceback); // the references pass to the interpreter
    m_type = m_value = m_traceback = nullptr;
    throw pybind11::error_already_set();
}

} // namespace ql::py
